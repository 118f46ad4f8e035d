//! Parameter sets by id: each a file, loaded once (explicitly, or by the first job that needs
//! it), shared by every job, and evictable. A loaded set comes with its prover (built once from
//! the parameters: a GPU prover uploads its SRS then), its orchestrator, and the shapes
//! recorded for it.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use kiln_groth16::{Check, Parameters, ParamsError, Shape};
use kiln_sched::{Config, SchedError, Scheduler, SharedProver};

/// Builds the prover of a parameter set: the CPU prover, or a GPU prover (which takes its VRAM
/// plan then). `kiln serve` passes the one `--backend` chose.
pub type ProverFactory =
    Arc<dyn Fn(Arc<Parameters>) -> Result<SharedProver, Box<dyn std::error::Error + Send + Sync>> + Send + Sync>;

/// The CPU prover's factory.
pub fn cpu_prover_factory() -> ProverFactory {
    Arc::new(|params| Ok(Arc::new(kiln_groth16::CpuProver::new(params)) as SharedProver))
}

/// Why a parameter set could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ParamsLoadError {
    /// No set of that id was configured.
    #[error("unknown parameter set {id:?}: the service has {known} (configure it with `kiln serve --params ID=FILE`)")]
    Unknown {
        /// The id asked for.
        id: String,
        /// The configured ids, comma-separated.
        known: String,
    },
    /// The file could not be read or is malformed.
    #[error("parameter set {id:?}: {source}")]
    Read {
        /// The set.
        id: String,
        /// The reader's error.
        #[source]
        source: ParamsError,
    },
    /// The prover could not be built over the parameters.
    #[error("parameter set {id:?}: building the prover failed: {source}")]
    Prover {
        /// The set.
        id: String,
        /// The prover's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The orchestrator refused its configuration.
    #[error("parameter set {id:?}: {source}")]
    Scheduler {
        /// The set.
        id: String,
        /// Its error.
        #[source]
        source: SchedError,
    },
    /// A thread loading it panicked (the set is not loaded; the next use tries again).
    #[error("parameter set {id:?}: a thread loading it panicked; the next use loads it again")]
    Poisoned {
        /// The set.
        id: String,
    },
}

/// A shape recorded once: empty until its first user records it (others wait on the lock).
type ShapeSlot = Arc<Mutex<Option<Arc<Shape>>>>;

/// A loaded parameter set: the parameters, the orchestrator over its prover, and its shapes.
pub struct Loaded {
    /// The parameters.
    pub params: Arc<Parameters>,
    /// The orchestrator proving with them.
    pub scheduler: Scheduler,
    /// Recorded shapes by `circuit/shape key`, each recorded once.
    shapes: Mutex<HashMap<String, ShapeSlot>>,
}

impl Loaded {
    /// The shape under `key`, recorded by `record` the first time (concurrent first users wait
    /// for one recording).
    ///
    /// # Errors
    /// `record`'s error (nothing is cached then: the next job records again).
    pub fn shape<E>(&self, key: &str, record: impl FnOnce() -> Result<Shape, E>) -> Result<Arc<Shape>, E> {
        let slot = {
            let mut shapes = self.shapes.lock().unwrap_or_else(|e| e.into_inner());
            shapes.entry(key.to_string()).or_default().clone()
        };
        let mut slot = slot.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(shape) = &*slot {
            return Ok(shape.clone());
        }
        let shape = Arc::new(record()?);
        *slot = Some(shape.clone());
        Ok(shape)
    }
}

struct Entry {
    path: PathBuf,
    /// Held while loading, so that a set is loaded once however many jobs want it at once.
    slot: Mutex<Option<Arc<Loaded>>>,
}

/// The configured parameter sets.
pub struct ParamsSets {
    entries: BTreeMap<String, Entry>,
    factory: ProverFactory,
    config: Config,
    check: Check,
}

impl std::fmt::Debug for ParamsSets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.entries.iter().map(|(id, e)| (id, &e.path))).finish()
    }
}

impl ParamsSets {
    /// The sets `files` (id → file), proved with provers from `factory` under orchestrators of
    /// `config` (its `options.verify` is forced on: the service stores verified proofs only),
    /// read with `check`.
    pub fn new(
        files: BTreeMap<String, PathBuf>,
        factory: ProverFactory,
        mut config: Config,
        check: Check,
    ) -> ParamsSets {
        config.options.verify = true;
        let entries = files.into_iter().map(|(id, path)| (id, Entry { path, slot: Mutex::new(None) })).collect();
        ParamsSets { entries, factory, config, check }
    }

    /// Whether `id` is configured.
    pub fn knows(&self, id: &str) -> bool {
        self.entries.contains_key(id)
    }

    /// The configured ids, comma-separated.
    pub fn ids(&self) -> String {
        let ids: Vec<&str> = self.entries.keys().map(String::as_str).collect();
        if ids.is_empty() { "no parameter sets".into() } else { ids.join(", ") }
    }

    fn entry(&self, id: &str) -> Result<&Entry, ParamsLoadError> {
        self.entries.get(id).ok_or_else(|| ParamsLoadError::Unknown { id: id.to_string(), known: self.ids() })
    }

    /// The loaded set `id`, loading it now if it is not (blocking: reads the file, builds the
    /// prover).
    ///
    /// # Errors
    /// Unknown id, unreadable file, or the prover could not be built.
    pub fn get(&self, id: &str) -> Result<Arc<Loaded>, ParamsLoadError> {
        let entry = self.entry(id)?;
        let mut slot = entry.slot.lock().map_err(|_| ParamsLoadError::Poisoned { id: id.to_string() })?;
        if let Some(loaded) = &*slot {
            return Ok(loaded.clone());
        }
        let start = Instant::now();
        let params = Arc::new(
            Parameters::read(&entry.path, self.check)
                .map_err(|source| ParamsLoadError::Read { id: id.into(), source })?,
        );
        let prover =
            (self.factory)(params.clone()).map_err(|source| ParamsLoadError::Prover { id: id.into(), source })?;
        let scheduler = Scheduler::new(vec![prover], self.config)
            .map_err(|source| ParamsLoadError::Scheduler { id: id.into(), source })?;
        let loaded = Arc::new(Loaded { params, scheduler, shapes: Mutex::new(HashMap::new()) });
        tracing::info!(params = id, path = %entry.path.display(), took = ?start.elapsed(), "parameter set loaded");
        *slot = Some(loaded.clone());
        Ok(loaded)
    }

    /// The set `id` if it is loaded now (never loads it; `None` while it is being loaded).
    pub fn loaded(&self, id: &str) -> Option<Arc<Loaded>> {
        self.entries.get(id)?.slot.try_lock().ok()?.clone()
    }

    /// Whether `id` is loaded now.
    ///
    /// # Errors
    /// Unknown id.
    pub fn is_loaded(&self, id: &str) -> Result<bool, ParamsLoadError> {
        Ok(self.entry(id)?.slot.lock().map(|s| s.is_some()).unwrap_or(false))
    }

    /// Drops the loaded set `id` (and its shapes): jobs being proved keep their copy until
    /// they finish; the next job loads it again. Returns whether it was loaded.
    ///
    /// # Errors
    /// Unknown id.
    pub fn evict(&self, id: &str) -> Result<bool, ParamsLoadError> {
        let entry = self.entry(id)?;
        let mut slot = entry.slot.lock().unwrap_or_else(|e| e.into_inner());
        Ok(slot.take().is_some())
    }

    /// The loaded sets now, by id (sets being loaded are not yet).
    pub fn loaded_sets(&self) -> Vec<(String, Arc<Loaded>)> {
        self.entries.iter().filter_map(|(id, e)| Some((id.clone(), e.slot.try_lock().ok()?.clone()?))).collect()
    }

    /// How many sets are loaded now.
    pub fn loaded_count(&self) -> usize {
        // A set being loaded holds its lock: it is not loaded yet.
        self.entries.values().filter(|e| e.slot.try_lock().map(|s| s.is_some()).unwrap_or(false)).count()
    }
}

//! The GPU prover: the SRS resident on the device (or streamed, the planned fallback), one
//! worker per lane of the VRAM plan, every byte of device memory from the plan's arenas.
//!
//! Start-up ([`GpuProver::new`]), under the device's exclusive section: measure free memory,
//! make the kiln-vram plan from the real needs ([`kiln_ntt::gpu::h_step_bytes`],
//! [`kiln_msm::gpu::scratch_bytes`], the SRS size), provision it (one `cuMemAlloc` per arena),
//! then fill it: the NTT domain, the SRS (when resident), each worker's a/b/c vectors, MSM
//! contexts and pinned host buffers. After that, proving makes no allocation, free, trim or
//! device-wide synchronisation: only copies, launches and waits on the worker's own streams.
//!
//! One proof on a worker ([`proof`]): each query's scalars (L: aux; A: inputs then A's dense
//! aux; B: B's dense inputs then dense aux) are gathered into page-locked buffers of the lane.
//! The sums over the witness come first, since they need nothing else: B's scalars are staged
//! in the memory phase and B_G1 and B_G2 (on its own stream and thread) start the compute
//! phase while the host stages L's and A's; those go up on the copy stream into the b and c
//! vectors (free until the H step) and are summed while the host evaluates a and b into
//! pinned buffers (straight from a recorded shape). Each query is split into 0 / 1 / other on
//! the device and summed by batch addition plus a tail MSM. Then the H step runs with the
//! uploads overlapped ([`GpuDomain::h_step_from_host`]) and c formed on the device as a∘b
//! (c_i = a_i·b_i in every row of a satisfied constraint system; an unsatisfied one makes a
//! proof that does not verify, as with c from the host, and kiln verifies every proof before
//! returning it), and leaves h on the device, where the H MSM reads it. No upload makes the
//! host wait.
//!
//! A proof that would wait for a lane (more proofs hold host sets than there are lanes: see
//! [`host`]) does all of that host work first, beside the other proofs' device work; its
//! device work then waits for nothing, and those of its a and b whose device vectors are free
//! go up during the sums instead of in the H step.
//!
//! Files: [`options`] (what a user sets), [`job`] (one proof's inputs), [`proof`] (one
//! proof on one lane); this file builds the prover and spreads a batch over its lanes.

mod fault;
mod host;
mod job;
mod options;
mod proof;

pub use options::{GpuOptions, SrsMode, parse_bytes};

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use blstrs::Scalar;
use kiln_cuda::cudarc::driver::CudaStream;
use kiln_cuda::{Device, DeviceBuf, DeviceMemory, check_stream};
use kiln_field::DeviceLayout;
use kiln_lock::{Lanes, SharedPolicy, WorkerId};
use kiln_msm::gpu::{Curve, GpuBases, MsmContext, scratch_bytes};
use kiln_ntt::Domain;
use kiln_ntt::gpu::{GpuDomain, h_step_bytes};
use kiln_vram::{ALIGN, Arena, Plan, PlanInput, SrsPlacement, Vram, measure_free};

use self::host::{HostSet, HostSets};
use self::job::Job;
use super::{Prover, Sums, Timings};
use crate::busy::BusyClock;
use crate::error::Groth16Error;
use crate::params::Parameters;
use crate::recorded::{Shape, Witness};
use crate::synth::Assignment;

const GIB: u64 = 1 << 30;
/// The worker id the prover uses for its own exclusive sections (start-up and release).
const PLANNER: WorkerId = usize::MAX;
/// Room for the alignment of every buffer taken from an arena (each rounds up to [`ALIGN`]).
const ALIGN_SLACK: u64 = 64 * ALIGN;

/// The five queries on the device (inputs included: a proof's A and B scalars are its dense
/// input scalars followed by its dense aux scalars, one vector per query). H, L and A are held
/// in pieces of at most [`GpuProver::piece`] bases, summed one piece at a time: one piece each
/// unless the VRAM plan chose pieces (so that a worker's MSM scratch fits beside the SRS).
struct ResidentSrs {
    h: Vec<GpuBases>,
    l: Vec<GpuBases>,
    a: Vec<GpuBases>,
    b_g1: GpuBases,
    b_g2: GpuBases,
}

/// `bases` on the device in pieces of at most `piece` (none for an empty query).
fn resident_pieces(
    device: &Device,
    bases: &[blstrs::G1Affine],
    piece: usize,
    arena: &impl DeviceMemory,
) -> Result<Vec<GpuBases>, Groth16Error> {
    Ok(bases.chunks(piece.max(1)).map(|p| GpuBases::g1(device, p, arena)).collect::<Result<_, _>>()?)
}

/// One lane's device state: its streams, buffers and MSM contexts. (A proof's host side, its
/// page-locked buffers, is a [`HostSet`] of its own: see [`host`].)
struct Worker {
    stream: Arc<CudaStream>,
    copy: Arc<CudaStream>,
    abc: [DeviceBuf<u64>; 3],
    g1: MsmContext,
    g2: MsmContext,
    /// Chunk buffers of the streamed SRS (G1, G2); `None` when resident.
    chunks: Option<(GpuBases, GpuBases)>,
}

struct State {
    domain: GpuDomain,
    srs: Option<ResidentSrs>,
    workers: Vec<Mutex<Worker>>,
    /// One per lane, plus the spares of proofs that prepare ahead.
    host_sets: HostSets,
}

/// The sizes the prover was built for (from the parameters).
#[derive(Debug, Clone, Copy)]
struct Sizing {
    log_n: u32,
    n: usize,
    aux: usize,
    a: usize,
    b: usize,
}

impl Sizing {
    fn of(p: &Parameters) -> Result<Sizing, Groth16Error> {
        let domain = Domain::for_size(p.h.len() + 1)?;
        Ok(Sizing { log_n: domain.log_size(), n: domain.size(), aux: p.l.len(), a: p.a.len(), b: p.b_g1.len() })
    }

    fn srs_bytes(&self) -> u64 {
        let g1 = Curve::G1.affine_bytes() as u64;
        let g2 = Curve::G2.affine_bytes() as u64;
        (self.n as u64 - 1 + self.aux as u64 + self.a as u64 + self.b as u64) * g1
            + self.b as u64 * g2
            + 8 * ALIGN_SLACK
    }

    /// The largest G1 sum that may run in pieces: H (n − 1 points), L (aux) or A.
    fn g1_whole(&self) -> usize {
        [self.n - 1, self.aux, self.a].into_iter().max().unwrap_or(1).max(1)
    }

    /// The most points of one G1 sum when H, L and A run in two pieces each, if they can: a
    /// piece's scalars are a range of a device vector, so L's and A's must fit the b and c
    /// vectors they are parked in (page-locked scalars upload whole).
    fn pieced(&self) -> Option<usize> {
        (self.aux <= self.n && self.a <= self.n && self.g1_whole() >= 2).then(|| self.g1_whole().div_ceil(2))
    }

    /// The G1 context's capacity when H, L and A run in pieces of at most `piece` points (B's
    /// sum is never split: its scalars are page-locked).
    fn g1_capacity(&self, piece: usize) -> usize {
        piece.min(self.g1_whole()).max(self.b).max(1)
    }

    /// What the VRAM planner gets for these sizes: the SRS, a whole-size worker, a worker with
    /// H, L and A in pieces (where they can be), and a streamed worker for `chunk` bases.
    fn plan_input(
        &self,
        device: String,
        free_bytes: u64,
        margin_bytes: u64,
        chunk: usize,
        workers: usize,
    ) -> PlanInput {
        let g2_cap = self.b.max(1);
        PlanInput {
            device,
            free_bytes,
            margin_bytes,
            srs_bytes: self.srs_bytes(),
            worker_bytes: self.worker_bytes(self.g1_capacity(self.g1_whole()), g2_cap),
            pieced_worker_bytes: self.pieced().map(|piece| self.worker_bytes(self.g1_capacity(piece), g2_cap)),
            streamed_worker_bytes: self.streamed_worker_bytes(chunk),
            workers_wanted: workers,
        }
    }

    /// The G1 and G2 contexts' capacities of a streamed worker: a chunk of bases at a time.
    fn streamed_capacities(&self, chunk: usize) -> (usize, usize) {
        (chunk.min(self.g1_capacity(self.g1_whole())), chunk.min(self.b.max(1)))
    }

    /// A streamed worker's arena: a, b, c, the MSM scratch for a chunk (as [`GpuProver::fill`]
    /// sizes the contexts) and the chunk's G1 and G2 bases.
    fn streamed_worker_bytes(&self, chunk: usize) -> u64 {
        let (g1_cap, g2_cap) = self.streamed_capacities(chunk);
        self.worker_bytes(g1_cap, g2_cap)
            + ((Curve::G1.affine_bytes() + Curve::G2.affine_bytes()) * chunk) as u64
            + ALIGN_SLACK
    }

    fn worker_bytes(&self, g1_cap: usize, g2_cap: usize) -> u64 {
        3 * (self.n * 32) as u64
            + scratch_bytes(g1_cap, Curve::G1) as u64
            + scratch_bytes(g2_cap, Curve::G2) as u64
            + ALIGN_SLACK
    }
}

/// Proves on one GPU. Built once from the parameters ([`GpuProver::new`]); proves batches of
/// circuits of their shape, one circuit per worker at a time.
pub struct GpuProver {
    params: Arc<Parameters>,
    device: Arc<Device>,
    policy: Arc<SharedPolicy<Lanes>>,
    plan: Plan,
    mode: SrsMode,
    sizing: Sizing,
    /// Dropped before `memory`: it holds the arenas' reservations.
    state: Option<State>,
    /// The plan's arenas and the domain's, released under the exclusive section on drop.
    memory: Option<(Vram, Arena)>,
    /// The next caller id handed to the lane policy: every proving thread gets its own, so
    /// that concurrent calls (a scheduler's workers, one circuit each) each take a free lane
    /// instead of colliding on one id.
    callers: AtomicUsize,
    /// [`GpuOptions::fail_launch_on_input`].
    fail_launch_on_input: Option<Scalar>,
    /// Time at least one lane's thread waited on its kernels and copies ([`Prover::device_busy`]).
    busy: BusyClock,
    /// The most points of one G1 sum over H, L or A (all of them, unless the plan chose
    /// pieces: see [`ResidentSrs`]).
    piece: usize,
    /// Proofs that did their host work before waiting for a lane ([`GpuProver::prepared_ahead`]).
    prepared_ahead: AtomicU64,
}

impl std::fmt::Debug for GpuProver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuProver")
            .field("device", &self.device.ordinal())
            .field("mode", &self.mode)
            .field("workers", &self.plan.workers)
            .finish_non_exhaustive()
    }
}

impl GpuProver {
    /// Opens the device, plans its memory for these parameters and fills it: the SRS is
    /// uploaded once here when the plan keeps it resident. Takes seconds for large SRS.
    ///
    /// # Errors
    /// No usable device (no driver, no kernels for it), no plan fits, or a driver call failed.
    pub fn new(params: impl Into<Arc<Parameters>>, options: &GpuOptions) -> Result<GpuProver, Groth16Error> {
        let params = params.into();
        let device = Device::open(options.device)?;
        let sizing = Sizing::of(&params)?;
        let policy = SharedPolicy::new(Lanes::new(1)?);
        let excl = policy.exclusive(PLANNER)?;
        let measured = measure_free(&excl, &device)?;
        let free = options.vram_budget.map_or(measured, |b| b.min(measured));
        let domain_bytes = h_step_bytes(sizing.log_n) as u64 + ALIGN_SLACK;
        let chunk = options.stream_chunk.max(1);
        let pieced = sizing.pieced();
        let input = sizing.plan_input(
            format!("{} ({})", device.info()?.name, options.device),
            free.saturating_sub(domain_bytes),
            options.margin_bytes,
            chunk,
            options.workers.max(1),
        );
        let plan = Plan::new(input)?;
        tracing::info!("VRAM plan:\n{plan}");
        let domain_arena = Arena::allocate(&excl, &device, "ntt domain", domain_bytes)?;
        let vram = match Vram::provision(&excl, &device, plan.clone()) {
            Ok(v) => v,
            Err(e) => {
                let _ = domain_arena.release(&excl, &device);
                return Err(e.into());
            }
        };
        excl.set_lanes(plan.workers)?;
        drop(excl);
        let plan_pieces = plan.pieces;
        let mode = match plan.srs {
            SrsPlacement::Resident => SrsMode::Resident,
            SrsPlacement::Streamed => SrsMode::Streamed,
        };
        let mut prover = GpuProver {
            params,
            device,
            policy,
            plan,
            mode,
            sizing,
            state: None,
            memory: Some((vram, domain_arena)),
            callers: AtomicUsize::new(0),
            fail_launch_on_input: options.fail_launch_on_input,
            busy: BusyClock::default(),
            piece: pieced.filter(|_| plan_pieces).unwrap_or_else(|| sizing.g1_whole()),
            prepared_ahead: AtomicU64::new(0),
        };
        let sets =
            prover.plan.workers + options.prepare_ahead.unwrap_or_else(|| spare_sets(&sizing, prover.plan.workers));
        // On error, dropping `prover` gives the arenas back.
        prover.state = Some(prover.fill(chunk, sets)?);
        Ok(prover)
    }

    /// Builds the domain, the resident SRS and the workers inside the provisioned arenas, and
    /// `sets` host sets.
    fn fill(&self, chunk: usize, sets: usize) -> Result<State, Groth16Error> {
        let d = &self.device;
        let s = self.sizing;
        // The host sets are page-locked beside the device work: pinning tens of GiB took the
        // driver longer than the SRS upload. Each set has a thread of its own, so that what of
        // the pinning can run in parallel does (how much, at 2^27, is not measured yet).
        std::thread::scope(|scope| {
            let start = Instant::now();
            let pinning: Vec<_> =
                (0..sets).map(|_| scope.spawn(move || HostSet::new(d, &s).map(|set| (set, start.elapsed())))).collect();
            let device_state = self.fill_device(chunk);
            let pinned: Vec<(HostSet, Duration)> = pinning
                .into_iter()
                .map(|t| t.join().expect("pinning a host set panicked"))
                .collect::<Result<_, _>>()?;
            let elapsed = pinned.iter().map(|&(_, e)| e).max().unwrap_or_default();
            let (domain, srs, workers) = device_state?;
            let host_sets = HostSets::new(pinned.into_iter().map(|(set, _)| set).collect());
            tracing::info!(
                sets,
                lanes = workers.len(),
                bytes = sets as u64 * HostSet::bytes(&s),
                ?elapsed,
                "page-locked host sets (one per lane, the rest for proofs that prepare ahead)"
            );
            Ok(State { domain, srs, workers, host_sets })
        })
    }

    /// The domain, the resident SRS (uploaded) and the workers, in the provisioned arenas.
    #[allow(clippy::type_complexity)]
    fn fill_device(&self, chunk: usize) -> Result<(GpuDomain, Option<ResidentSrs>, Vec<Mutex<Worker>>), Groth16Error> {
        let (vram, domain_arena) = self.memory.as_ref().expect("memory is provisioned before fill");
        let d = &self.device;
        let p = &*self.params;
        let s = self.sizing;
        let setup = d.new_stream()?;
        let domain = GpuDomain::new(d, &setup, &Domain::for_size(s.n)?, domain_arena)?;
        let srs = match vram.srs() {
            Some(arena) => {
                let start = Instant::now();
                let srs = ResidentSrs {
                    h: resident_pieces(d, &p.h, self.piece, arena)?,
                    l: resident_pieces(d, &p.l, self.piece, arena)?,
                    a: resident_pieces(d, &p.a, self.piece, arena)?,
                    b_g1: GpuBases::g1(d, &p.b_g1, arena)?,
                    b_g2: GpuBases::g2(d, &p.b_g2, arena)?,
                };
                tracing::info!(elapsed = ?start.elapsed(), bytes = s.srs_bytes(), "SRS resident on the device");
                Some(srs)
            }
            None => None,
        };
        let mut workers = Vec::with_capacity(vram.arenas().len());
        for arena in vram.arenas() {
            let stream = d.new_stream()?;
            let copy = d.new_stream()?;
            let words = s.n * <Scalar as DeviceLayout>::WORDS;
            let abc = [
                arena.take_poisoned::<u64>(&stream, words, "a")?,
                arena.take_poisoned::<u64>(&stream, words, "b")?,
                arena.take_poisoned::<u64>(&stream, words, "c")?,
            ];
            let (g1_cap, g2_cap, chunks) = match self.mode {
                SrsMode::Resident => (s.g1_capacity(self.piece), s.b.max(1), None),
                SrsMode::Streamed => {
                    let g2_stream = d.new_stream()?;
                    let c1 = GpuBases::with_capacity(&stream, Curve::G1, chunk, arena)?;
                    let c2 = GpuBases::with_capacity(&g2_stream, Curve::G2, chunk, arena)?;
                    let (g1_cap, g2_cap) = s.streamed_capacities(chunk);
                    (g1_cap, g2_cap, Some((c1, c2)))
                }
            };
            let g1 = MsmContext::on_stream(d, stream.clone(), Curve::G1, g1_cap, arena)?;
            let g2 = MsmContext::new(d, Curve::G2, g2_cap, arena)?;
            workers.push(Mutex::new(Worker { stream, copy, abc, g1, g2, chunks }));
        }
        check_stream(&setup)?;
        for w in &workers {
            let w = w.lock().unwrap_or_else(|e| e.into_inner());
            check_stream(&w.stream)?;
            check_stream(w.g2.stream())?;
        }
        Ok((domain, srs, workers))
    }

    /// The VRAM plan this prover runs under (printable: what fits and why).
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Device bytes held by the NTT domain's arena (outside the plan: the plan sees what is
    /// free after it).
    pub fn domain_bytes(&self) -> u64 {
        self.memory.as_ref().map_or(0, |(_, a)| a.bytes())
    }

    /// Whether the SRS is resident or streamed.
    pub fn srs_mode(&self) -> SrsMode {
        self.mode
    }

    /// How many proofs so far did all of their host work before waiting for a lane, in a
    /// spare host set ([`GpuOptions::prepare_ahead`]); their device work started at once.
    pub fn prepared_ahead(&self) -> u64 {
        self.prepared_ahead.load(Ordering::Relaxed)
    }

    /// The device.
    pub fn device(&self) -> &Arc<Device> {
        &self.device
    }

    fn state(&self) -> &State {
        self.state.as_ref().expect("state exists from new() until drop")
    }
}

impl Drop for GpuProver {
    fn drop(&mut self) {
        // Every reservation goes back to its arena first; then the arenas go back to the
        // driver, device-global, under the exclusive section.
        self.state = None;
        if let Some((vram, domain_arena)) = self.memory.take() {
            match self.policy.exclusive(PLANNER) {
                Ok(excl) => {
                    if let Err(e) = vram.release(&excl, &self.device) {
                        tracing::warn!("releasing the GPU prover's arenas: {e}");
                    }
                    if let Err(e) = domain_arena.release(&excl, &self.device) {
                        tracing::warn!("releasing the NTT domain's arena: {e}");
                    }
                }
                Err(e) => tracing::warn!("GPU prover memory kept until exit: {e}"),
            }
        }
    }
}

impl Prover for GpuProver {
    fn name(&self) -> String {
        format!("cuda:{}", self.device.ordinal())
    }

    fn parameters(&self) -> &Parameters {
        &self.params
    }

    fn on_gpu(&self) -> bool {
        true
    }

    fn lanes(&self) -> usize {
        self.plan.workers
    }

    fn in_flight(&self) -> usize {
        self.state().host_sets.count()
    }

    fn pinned_host_bytes(&self) -> u64 {
        self.state().host_sets.count() as u64 * HostSet::bytes(&self.sizing)
    }

    fn device_busy(&self) -> Option<Duration> {
        Some(self.busy.total())
    }

    fn device_idle_edges(&self, from: Instant, to: Instant) -> Option<crate::IdleEdges> {
        self.busy.idle_edges(from, to)
    }

    fn device_memory(&self) -> Option<super::DeviceMemoryUse> {
        let (free, total) = self.device.mem_info().ok()?;
        Some(super::DeviceMemoryUse {
            reserved: self.plan.device_bytes() + self.domain_bytes(),
            in_use: (total - free.min(total)) as u64,
            total: total as u64,
        })
    }

    fn sums(&self, assignments: &[Assignment], t: &mut Timings) -> Result<Vec<Sums>, Groth16Error> {
        let jobs: Vec<Job<'_>> = assignments.iter().map(Job::assigned).collect();
        self.run_jobs(&jobs, t)
    }

    fn sums_recorded(&self, shape: &Shape, witnesses: &[Witness], t: &mut Timings) -> Result<Vec<Sums>, Groth16Error> {
        let jobs: Vec<Job<'_>> = witnesses.iter().map(|w| Job::recorded(shape, w)).collect();
        self.run_jobs(&jobs, t)
    }
}

impl GpuProver {
    /// A caller id of its own for one proving thread (never [`PLANNER`]): the policy hands
    /// lanes out per id, and one id may hold one lane at a time.
    fn caller(&self) -> WorkerId {
        self.callers.fetch_add(1, Ordering::Relaxed) % PLANNER
    }

    /// The sums of every job, spread over the lanes (one thread per host set, each taking the
    /// next job; the lanes' streams run side by side, and a thread that finds every lane busy
    /// prepares its job ahead).
    fn run_jobs(&self, jobs: &[Job<'_>], t: &mut Timings) -> Result<Vec<Sums>, Groth16Error> {
        let state = self.state();
        let assignments = jobs;
        let lanes = state.host_sets.count().min(assignments.len()).max(1);
        if lanes == 1 {
            let caller = self.caller();
            return assignments.iter().map(|job| self.sums_on(caller, job, t)).collect();
        }
        // Several lanes: each thread takes the next circuit; the lanes' streams run side by side.
        let next = AtomicUsize::new(0);
        let results: Vec<LaneResult> = std::thread::scope(|sc| {
            let handles: Vec<_> = (0..lanes)
                .map(|_| {
                    let next = &next;
                    let caller = self.caller();
                    sc.spawn(move || {
                        let mut out = Vec::new();
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let Some(job) = assignments.get(i) else { return Ok(out) };
                            let mut ti = Timings::default();
                            out.push((i, self.sums_on(caller, job, &mut ti)?, ti));
                        }
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap_or_else(|p| Err(panicked(p)))).collect()
        });
        let mut all = vec![None; assignments.len()];
        for r in results {
            for (i, s, ti) in r? {
                all[i] = Some(s);
                add_timings(t, &ti);
            }
        }
        Ok(all.into_iter().map(|s| s.expect("every circuit was proved")).collect())
    }
}

/// The spare host sets by default: one, if the sets of every lane and the spare take at most
/// two thirds of the host memory available at start-up (the rest stays for witnesses, which
/// are as large as a set's scalars, and for the system); none otherwise, or where the OS does
/// not say. At 2^27 a set is ~17 GiB (a, b and the sums' scalars): an 80 GB card's one lane
/// gets a spare beside 45 GiB of parameters on a 128 GiB host; a 141 GB card's two lanes and a
/// spare (~51 GiB) need ~77 GiB available after the parameters, which such a host lacks.
fn spare_sets(s: &Sizing, lanes: usize) -> usize {
    let need = HostSet::bytes(s) * (lanes as u64 + 1);
    kiln_cuda::host::available_bytes().map_or(0, |available| usize::from(need <= available / 3 * 2))
}

/// What one lane's thread returns: (circuit index, its sums, its phase times) per circuit.
type LaneResult = Result<Vec<(usize, Sums, Timings)>, Groth16Error>;

fn add_timings(t: &mut Timings, o: &Timings) {
    t.prepare += o.prepare;
    t.h_poly += o.h_poly;
    t.msm_h_l += o.msm_h_l;
    t.msm_a_b_g1 += o.msm_a_b_g1;
    t.msm_b_g2 += o.msm_b_g2;
}

fn panicked(p: Box<dyn std::any::Any + Send>) -> Groth16Error {
    let msg = p
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    Groth16Error::Msm(kiln_msm::MsmError::InvalidArgument(format!("a GPU worker thread panicked: {msg}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One PoRep partition of a 32 GiB sector (ARCHITECTURE §3: 2^27 domain, 130,169,893 aux,
    /// A 99.7% and B 25% dense over aux, 328 inputs) on an 80 GB card, whose usable memory
    /// after the NTT domain was 75.53 GiB on an H100: the SRS and a worker with whole-size MSMs
    /// do not fit, so the SRS was streamed; a worker with H, L and A in two pieces does fit.
    #[test]
    fn a_filecoin_partition_keeps_its_srs_resident_on_an_80_gb_card_with_pieces() {
        let aux = 130_169_893usize;
        let s = Sizing { log_n: 27, n: 1 << 27, aux, a: aux / 1000 * 997 + 328, b: aux / 4 + 328 };
        let piece = s.pieced().expect("L and A fit the domain's vectors");
        assert_eq!(piece, (1 << 26), "two pieces of H's 2^27 - 1 points");
        let chunk = GpuOptions::default().stream_chunk;
        let plan = Plan::new(s.plan_input("80 GB card".into(), 7553 * GIB / 100, 0, chunk, 1)).unwrap();
        assert!(plan.srs == SrsPlacement::Resident && plan.pieces, "{plan}");
        println!("{plan}");
    }

    /// The same partition on a 24 GB card (21.5 GiB usable): the SRS is streamed, and a
    /// streamed worker holds a, b, c and the scratch for one chunk of bases (2^20, the default),
    /// not for a whole query: it fits, where a whole-size worker (36 GiB) would not.
    #[test]
    fn a_filecoin_partition_streams_on_a_24_gb_card() {
        let aux = 130_169_893usize;
        let s = Sizing { log_n: 27, n: 1 << 27, aux, a: aux / 1000 * 997 + 328, b: aux / 4 + 328 };
        let chunk = GpuOptions::default().stream_chunk;
        let streamed = s.streamed_worker_bytes(chunk);
        let abc = 3 * (s.n as u64) * 32;
        assert!(streamed > abc && streamed < abc + 2 * GIB, "a streamed worker: {streamed} B");
        let plan = Plan::new(s.plan_input("24 GB card".into(), 2150 * GIB / 100, 0, chunk, 2)).unwrap();
        assert_eq!((plan.srs, plan.workers, plan.arena_bytes), (SrsPlacement::Streamed, 1, streamed), "{plan}");
        println!("{plan}");
    }
}

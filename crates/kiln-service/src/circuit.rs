//! Circuit kinds: what a job's `circuit` name and witness payload turn into. The built-in
//! circuits are registered by default; a downstream project registers its own by implementing
//! [`CircuitKind`] (as a daemon links its circuits in).

use std::collections::BTreeMap;
use std::sync::Arc;

use kiln_groth16::circuits::{Builtin, Kind};
use kiln_groth16::{Groth16Error, Parameters, Shape, Witness};

/// Why a witness payload was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PayloadError {
    /// The payload has the wrong number of bytes.
    #[error("witness payload is {got} bytes, the circuit takes exactly {expected}")]
    Length {
        /// Bytes the circuit kind takes.
        expected: usize,
        /// Bytes given.
        got: usize,
    },
    /// A size (log2 of the constraint count) outside what the circuit kind accepts.
    #[error("witness payload: log size {got} is outside {min}..={max}")]
    LogSize {
        /// The log size given.
        got: u32,
        /// Smallest accepted.
        min: u32,
        /// Largest accepted.
        max: u32,
    },
    /// A downstream circuit kind's own reason.
    #[error("witness payload: {0}")]
    Invalid(String),
}

/// One job's circuit, decoded from its payload: knows its shape and makes its witness.
pub trait CircuitInstance: Send + 'static {
    /// Equal keys mean equal shapes (the same constraint system with other values): the
    /// service records one [`Shape`] per key and parameter set and shares it.
    fn shape_key(&self) -> String;

    /// Refuses, cheaply, an instance that cannot be proved with `params` (a size that is not
    /// theirs), before its shape is recorded: recording costs time and memory in the
    /// circuit's size, which comes from the client's payload. The default accepts everything
    /// (a mismatch then fails the job when it is proved).
    ///
    /// # Errors
    /// What does not fit, for the client.
    fn check_params(&self, params: &Parameters) -> Result<(), String> {
        let _ = params;
        Ok(())
    }

    /// Records the shape (once per key; [`Shape::record`] of a circuit of this shape).
    ///
    /// # Errors
    /// The circuit's synthesis failed.
    fn record_shape(&self) -> Result<Shape, Groth16Error>;

    /// Makes the witness through the recorded shape (on a CPU thread of the orchestrator).
    ///
    /// # Errors
    /// The circuit's synthesis failed.
    fn witness(self: Box<Self>, shape: &Shape) -> Result<Witness, Groth16Error>;
}

/// A kind of circuit the service proves: decodes a job's witness payload into a circuit.
///
/// `decode` runs when a job is submitted (a payload it refuses is refused to the client, and
/// nothing is stored) and again when a worker takes the job, so it must be deterministic.
pub trait CircuitKind: Send + Sync + 'static {
    /// The name clients give as the job's `circuit`.
    fn name(&self) -> &str;

    /// The circuit of a payload.
    ///
    /// # Errors
    /// The payload is malformed for this kind ([`PayloadError`]).
    fn decode(&self, payload: &[u8]) -> Result<Box<dyn CircuitInstance>, PayloadError>;
}

/// The witness payload of a built-in circuit: its size and its seed (the witness follows from
/// them). Encoded as 9 bytes: `log_size` (one byte), then `seed` (8 bytes, little-endian).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuiltinWitness {
    /// log2 of the constraint count, [`BuiltinWitness::MIN_LOG_SIZE`] to
    /// [`BuiltinWitness::MAX_LOG_SIZE`].
    pub log_size: u32,
    /// The witness's seed.
    pub seed: u64,
}

impl BuiltinWitness {
    /// Bytes of the encoding.
    pub const BYTES: usize = 9;
    /// Smallest log size (as `kiln prove --log-size`).
    pub const MIN_LOG_SIZE: u32 = 4;
    /// Largest log size (as `kiln prove --log-size`).
    pub const MAX_LOG_SIZE: u32 = 28;

    /// The payload bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(Self::BYTES);
        // The log size is at most 28: it fits a byte (checked on decode).
        out.push(u8::try_from(self.log_size).unwrap_or(u8::MAX));
        out.extend_from_slice(&self.seed.to_le_bytes());
        out
    }

    /// Decodes and range-checks a payload.
    ///
    /// # Errors
    /// Not [`BuiltinWitness::BYTES`] bytes, or a log size out of range.
    pub fn decode(payload: &[u8]) -> Result<BuiltinWitness, PayloadError> {
        let bytes: &[u8; Self::BYTES] =
            payload.try_into().map_err(|_| PayloadError::Length { expected: Self::BYTES, got: payload.len() })?;
        let log_size = u32::from(bytes[0]);
        if !(Self::MIN_LOG_SIZE..=Self::MAX_LOG_SIZE).contains(&log_size) {
            return Err(PayloadError::LogSize { got: log_size, min: Self::MIN_LOG_SIZE, max: Self::MAX_LOG_SIZE });
        }
        let mut seed = [0u8; 8];
        seed.copy_from_slice(&bytes[1..]);
        Ok(BuiltinWitness { log_size, seed: u64::from_le_bytes(seed) })
    }
}

/// A built-in circuit kind ([`kiln_groth16::circuits`]), registered under its name.
#[derive(Debug, Clone, Copy)]
pub struct BuiltinKind(pub Kind);

struct BuiltinInstance(Builtin);

impl CircuitInstance for BuiltinInstance {
    fn shape_key(&self) -> String {
        format!("{}/{}", self.0.kind, self.0.constraints)
    }

    fn check_params(&self, params: &Parameters) -> Result<(), String> {
        // A built-in circuit of 2^k constraints fills a domain of 2^k points; the H query
        // has one point fewer.
        let domain = params.h.len() + 1;
        if domain == self.0.constraints {
            Ok(())
        } else {
            Err(format!(
                "{} at {} constraints does not fit parameters for a domain of {domain} points (log size {})",
                self.0.kind,
                self.0.constraints,
                domain.trailing_zeros()
            ))
        }
    }

    fn record_shape(&self) -> Result<Shape, Groth16Error> {
        Shape::record(Builtin { seed: 0, ..self.0 })
    }

    fn witness(self: Box<Self>, shape: &Shape) -> Result<Witness, Groth16Error> {
        self.0.witness(shape)
    }
}

impl CircuitKind for BuiltinKind {
    fn name(&self) -> &str {
        self.0.name()
    }

    fn decode(&self, payload: &[u8]) -> Result<Box<dyn CircuitInstance>, PayloadError> {
        let w = BuiltinWitness::decode(payload)?;
        Ok(Box::new(BuiltinInstance(Builtin::new(self.0, 1 << w.log_size, w.seed))))
    }
}

/// The circuit kinds a service proves, by name.
#[derive(Clone)]
pub struct Circuits {
    kinds: BTreeMap<String, Arc<dyn CircuitKind>>,
}

impl std::fmt::Debug for Circuits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.kinds.keys()).finish()
    }
}

impl Default for Circuits {
    /// The built-in circuits (`mimc`, `squaring`, `porep`).
    fn default() -> Self {
        let mut c = Circuits::empty();
        for kind in Kind::ALL {
            c.register(Arc::new(BuiltinKind(kind)));
        }
        c
    }
}

impl Circuits {
    /// No circuit kind at all.
    pub fn empty() -> Circuits {
        Circuits { kinds: BTreeMap::new() }
    }

    /// Adds `kind` under its name (replacing a kind of the same name).
    pub fn register(&mut self, kind: Arc<dyn CircuitKind>) -> &mut Circuits {
        self.kinds.insert(kind.name().to_string(), kind);
        self
    }

    /// The kind registered under `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn CircuitKind>> {
        self.kinds.get(name)
    }

    /// The registered names, comma-separated (for error messages).
    pub fn names(&self) -> String {
        self.kinds.keys().map(String::as_str).collect::<Vec<_>>().join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_payload_round_trips_and_refuses_bad_lengths_and_sizes() {
        let w = BuiltinWitness { log_size: 6, seed: 0x0102_0304_0506_0708 };
        assert_eq!(BuiltinWitness::decode(&w.encode()), Ok(w));
        assert_eq!(BuiltinWitness::decode(&[6; 8]), Err(PayloadError::Length { expected: 9, got: 8 }));
        assert_eq!(BuiltinWitness::decode(&[]), Err(PayloadError::Length { expected: 9, got: 0 }));
        let mut big = w.encode();
        big[0] = 29;
        assert_eq!(BuiltinWitness::decode(&big), Err(PayloadError::LogSize { got: 29, min: 4, max: 28 }));
    }

    #[test]
    fn default_registry_holds_the_builtins() {
        let c = Circuits::default();
        assert_eq!(c.names(), "mimc, porep, squaring");
        let porep = c.get("porep").expect("porep is built in");
        let a = porep.decode(&BuiltinWitness { log_size: 6, seed: 1 }.encode()).expect("valid payload");
        let b = porep.decode(&BuiltinWitness { log_size: 6, seed: 2 }.encode()).expect("valid payload");
        assert_eq!(a.shape_key(), b.shape_key());
        assert!(c.get("groth").is_none());
    }
}

//! The Groth16 prover: a [`Prover`] (CPU or GPU) built once from the parameters, and the
//! functions that prove batches of circuits with it.
//!
//! A prover owns its parameters (the GPU prover keeps the SRS resident on the device) and
//! computes the five sums of each proof ([`Sums`]); everything around them is shared here,
//! so both provers give the same bytes for the same (r, s): synthesis, the shape checks,
//! the epilogue and the verification of every proof before it is handed out.
//!
//! The arithmetic is bellperson's (`prover/native.rs`), so for the same parameters, circuit
//! and (r, s) the proof bytes are identical:
//! A = α + Σ a_i·A_i + r·δ, B = β + Σ b_i·B_i + s·δ,
//! C = s·ΣA + r·ΣB_G1 + r·s·δ + s·α + r·β + ΣH + ΣL.

mod cpu;
#[cfg(feature = "cuda")]
mod gpu;

pub mod conformance;

use std::time::{Duration, Instant};

use bellpepper_core::Circuit;
use blstrs::{G1Projective, G2Projective, Scalar};
use ff::Field;
use group::Curve;
use group::prime::PrimeCurveAffine;
use kiln_ntt::Domain;
use rand_core::RngCore;
use rayon::prelude::*;

pub use cpu::CpuProver;
#[cfg(feature = "cuda")]
pub use gpu::{GpuOptions, GpuProver, SrsMode, parse_bytes};

use crate::error::Groth16Error;
use crate::params::Parameters;
use crate::proof::Proof;
use crate::recorded::{Shape, Witness};
use crate::synth::{Assignment, synthesize};
use crate::verifier::{PreparedVerifyingKey, verify_proof};

/// The five sums of one proof, before randomisation. Implementations must give exactly these
/// group elements (exact arithmetic, so any correct implementation does).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sums {
    /// Σ a_i·A_i over inputs and aux (A's density).
    pub a: G1Projective,
    /// Σ b_i·B_i in G1 (B's density).
    pub b_g1: G1Projective,
    /// Σ b_i·B_i in G2.
    pub b_g2: G2Projective,
    /// Σ h_i·H_i, h the quotient polynomial's coefficients.
    pub h: G1Projective,
    /// Σ aux_i·L_i.
    pub l: G1Projective,
}

/// A prover's device memory, in bytes ([`Prover::device_memory`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceMemoryUse {
    /// What the prover's VRAM plan reserved at start-up (resident SRS, the lanes' arenas, the
    /// NTT domain): all it ever holds, since nothing is allocated while proving.
    pub reserved: u64,
    /// In use on the whole device now (total − free: every process's, the driver's included).
    pub in_use: u64,
    /// The device's memory.
    pub total: u64,
}

/// A Groth16 prover over fixed parameters: [`CpuProver`] anywhere, `GpuProver` with a GPU.
pub trait Prover: Sync {
    /// A short name for logs and reports ("cpu", "cuda:0", ...).
    fn name(&self) -> String;

    /// The parameters it proves with.
    fn parameters(&self) -> &Parameters;

    /// Whether the heavy phases run on a GPU (for reports).
    fn on_gpu(&self) -> bool {
        false
    }

    /// How many proofs its device works on at once: the GPU prover's lanes (its VRAM plan's
    /// workers), 1 for the CPU prover, whose phases already use every core.
    fn lanes(&self) -> usize {
        1
    }

    /// How many proofs it works on at once when called from that many threads (one circuit
    /// per call): its lanes, plus those that prepare ahead on the host while every lane is busy
    /// (the GPU prover's spare page-locked sets). A scheduler runs this many proving workers.
    fn in_flight(&self) -> usize {
        self.lanes()
    }

    /// Time since it was built during which its device was working on a proof: at least one
    /// lane's thread waiting on its kernels and copies (the host's preparation of the inputs
    /// not counted). `None` for a prover without a device. A
    /// counter: the busy fraction of a span of time is the difference of two readings over
    /// the span's length.
    fn device_busy(&self) -> Option<Duration> {
        None
    }

    /// How long its device waited, within `from..to`, before its first busy instant and after
    /// its last (the idle ends of a batch; see [`crate::BusyClock::idle_edges`]). `None` for a
    /// prover without a device, or when the span is older than the device's remembered history.
    fn device_idle_edges(&self, from: std::time::Instant, to: std::time::Instant) -> Option<crate::IdleEdges> {
        let _ = (from, to);
        None
    }

    /// Page-locked host bytes it holds for its proofs (the GPU prover's host sets), for host
    /// memory plans and reports; 0 for a prover without a device.
    fn pinned_host_bytes(&self) -> u64 {
        0
    }

    /// Its device's memory now (a driver query, never called on the proving path); `None` for
    /// a prover without a device, or when the driver cannot say.
    fn device_memory(&self) -> Option<DeviceMemoryUse> {
        None
    }

    /// The sums of each synthesized circuit of a batch (shapes already checked against the
    /// parameters), adding the time of each phase to `t`.
    fn sums(&self, assignments: &[Assignment], t: &mut Timings) -> Result<Vec<Sums>, Groth16Error>;

    /// The sums of circuits synthesized through a recorded `shape`: `witnesses` hold their
    /// (input, aux), and a, b, c are the shape's sparse products of them. The default
    /// evaluates into fresh vectors (timed as preparation); the GPU prover evaluates straight
    /// into its pinned upload buffers.
    fn sums_recorded(&self, shape: &Shape, witnesses: &[Witness], t: &mut Timings) -> Result<Vec<Sums>, Groth16Error> {
        let assignments = timed(&mut t.prepare, || {
            witnesses.par_iter().map(|w| shape.evaluate(w.clone())).collect::<Result<Vec<_>, _>>()
        })?;
        self.sums(&assignments, t)
    }
}

/// Options of a proving run.
#[derive(Debug, Clone, Copy)]
pub struct ProveOptions {
    /// Check a·b = c for every constraint before proving and fail with
    /// [`Groth16Error::Unsatisfied`] instead of making a proof.
    pub check_satisfied: bool,
    /// Verify every proof before returning it and fail with [`Groth16Error::ProofRejected`]
    /// if one does not verify (on by default: a few ms per proof against the proving time;
    /// turn it off only to time the prover alone).
    pub verify: bool,
}

impl Default for ProveOptions {
    fn default() -> Self {
        ProveOptions { check_satisfied: false, verify: true }
    }
}

/// Wall-clock time per phase, summed over the circuits of a batch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timings {
    /// Running the circuits (CPU).
    pub synthesis: Duration,
    /// Preparing the GPU's inputs on the host: copies into pinned buffers, density gathers.
    pub prepare: Duration,
    /// The H polynomial (NTTs), uploads included on the GPU.
    pub h_poly: Duration,
    /// The H and L MSMs (G1).
    pub msm_h_l: Duration,
    /// The A and B_G1 MSMs (G1, with density).
    pub msm_a_b_g1: Duration,
    /// The B_G2 MSM (on the GPU it overlaps the G1 sums, on its own stream).
    pub msm_b_g2: Duration,
    /// Assembling A, B, C (CPU).
    pub epilogue: Duration,
    /// Verifying the proofs before they are returned (CPU).
    pub verify: Duration,
    /// Whether the heavy phases ran on a GPU.
    pub on_gpu: bool,
}

impl Timings {
    /// Sum of all phases (more than the wall time where phases overlap).
    pub fn total(&self) -> Duration {
        self.phases().iter().map(|p| p.2).sum()
    }

    /// (name, where it ran, duration) per phase, in order.
    pub fn phases(&self) -> [(&'static str, &'static str, Duration); 8] {
        let dev = if self.on_gpu { "gpu" } else { "cpu" };
        [
            ("synthesis", "cpu", self.synthesis),
            ("prepare", "cpu", self.prepare),
            ("h_poly (NTT)", dev, self.h_poly),
            ("msm H + L", dev, self.msm_h_l),
            ("msm A + B_G1", dev, self.msm_a_b_g1),
            ("msm B_G2", dev, self.msm_b_g2),
            ("epilogue", "cpu", self.epilogue),
            ("verify", "cpu", self.verify),
        ]
    }
}

/// Proves one circuit with fresh r and s from `rng`.
pub fn create_proof<C, P, R>(prover: &P, circuit: C, rng: &mut R) -> Result<Proof, Groth16Error>
where
    C: Circuit<Scalar> + Send,
    P: Prover + ?Sized,
    R: RngCore,
{
    let (mut proofs, _) = create_proofs(prover, vec![circuit], rng, ProveOptions::default())?;
    Ok(proofs.remove(0))
}

/// Proves a batch of equally shaped circuits, with fresh r and s per circuit from `rng`
/// (drawn r then s, per circuit, like bellperson's `create_random_proof_batch`).
pub fn create_proofs<C, P, R>(
    prover: &P,
    circuits: Vec<C>,
    rng: &mut R,
    options: ProveOptions,
) -> Result<(Vec<Proof>, Timings), Groth16Error>
where
    C: Circuit<Scalar> + Send,
    P: Prover + ?Sized,
    R: RngCore,
{
    let r_s: Vec<(Scalar, Scalar)> =
        (0..circuits.len()).map(|_| (Scalar::random(&mut *rng), Scalar::random(&mut *rng))).collect();
    create_proofs_with(prover, circuits, &r_s, options)
}

/// Proves a batch with the given (r, s) per circuit (for tests and cross-checks).
pub fn create_proofs_with<C, P>(
    prover: &P,
    circuits: Vec<C>,
    r_s: &[(Scalar, Scalar)],
    options: ProveOptions,
) -> Result<(Vec<Proof>, Timings), Groth16Error>
where
    C: Circuit<Scalar> + Send,
    P: Prover + ?Sized,
{
    create_proofs_recorded(prover, None, circuits, r_s, options)
}

/// [`create_proofs_with`] with synthesis through a recorded [`Shape`] when given: per proof
/// only the witness is generated (timed as synthesis), and A·z, B·z, C·z are the shape's
/// sparse products, computed by the prover where it wants them (the GPU prover: straight into
/// its pinned upload buffers). Record the shape once per circuit shape ([`Shape::record`]).
pub fn create_proofs_recorded<C, P>(
    prover: &P,
    shape: Option<&Shape>,
    circuits: Vec<C>,
    r_s: &[(Scalar, Scalar)],
    options: ProveOptions,
) -> Result<(Vec<Proof>, Timings), Groth16Error>
where
    C: Circuit<Scalar> + Send,
    P: Prover + ?Sized,
{
    if r_s.len() != circuits.len() {
        return Err(Groth16Error::Randomness { got: r_s.len(), circuits: circuits.len() });
    }
    let mut t = Timings { on_gpu: prover.on_gpu(), ..Timings::default() };
    let Some(shape) = shape else {
        let assignments: Vec<Assignment> =
            timed(&mut t.synthesis, || circuits.into_par_iter().map(synthesize).collect::<Result<_, _>>())?;
        tracing::debug!(circuits = assignments.len(), elapsed = ?t.synthesis, "synthesis done");
        let proofs = prove_assignments(prover, &assignments, r_s, options, &mut t)?;
        return Ok((proofs, t));
    };
    let witnesses: Vec<Witness> =
        timed(&mut t.synthesis, || circuits.into_par_iter().map(|c| shape.witness(c)).collect::<Result<_, _>>())?;
    let proofs = prove_witnesses(prover, shape, &witnesses, r_s, options, &mut t)?;
    Ok((proofs, t))
}

/// Proves witnesses already generated through a recorded `shape` ([`Shape::witness`]): the
/// shape checked against the parameters, (optionally) every a·b = c, the prover's sums
/// ([`Prover::sums_recorded`]), the epilogue and (by default) the verification of every proof.
///
/// The proving half of [`create_proofs_recorded`], public so that a scheduler can generate
/// witnesses on its CPU stage and prove them on another (`kiln-sched`); `witnesses[i]` is
/// proved with `r_s[i]`.
pub fn prove_witnesses<P: Prover + ?Sized>(
    prover: &P,
    shape: &Shape,
    witnesses: &[Witness],
    r_s: &[(Scalar, Scalar)],
    options: ProveOptions,
    t: &mut Timings,
) -> Result<Vec<Proof>, Groth16Error> {
    check_shape(&shape_counts(shape), prover.parameters())?;
    check_batch(witnesses.len(), r_s, options, |i| Ok(shape.evaluate(witnesses[i].clone())?.first_unsatisfied()))?;
    if witnesses.is_empty() {
        return Ok(Vec::new());
    }
    let sums = prover.sums_recorded(shape, witnesses, t)?;
    let inputs: Vec<&[Scalar]> = witnesses.iter().map(|w| &w.input[..]).collect();
    finish(prover, &sums, &inputs, r_s, options, t)
}

/// Proves already synthesized circuits: shape checks, the prover's sums, the epilogue, and
/// (by default) verification of every proof.
pub fn prove_assignments<P: Prover + ?Sized>(
    prover: &P,
    assignments: &[Assignment],
    r_s: &[(Scalar, Scalar)],
    options: ProveOptions,
    t: &mut Timings,
) -> Result<Vec<Proof>, Groth16Error> {
    check_shapes(assignments, prover.parameters())?;
    check_batch(assignments.len(), r_s, options, |i| Ok(assignments[i].first_unsatisfied()))?;
    if assignments.is_empty() {
        return Ok(Vec::new());
    }
    let sums = prover.sums(assignments, t)?;
    let inputs: Vec<&[Scalar]> = assignments.iter().map(|a| &a.input[..]).collect();
    finish(prover, &sums, &inputs, r_s, options, t)
}

/// One (r, s) per circuit, and with [`ProveOptions::check_satisfied`] no circuit with an
/// unsatisfied constraint (`first_unsatisfied(i)`: circuit i's first, if any).
fn check_batch(
    circuits: usize,
    r_s: &[(Scalar, Scalar)],
    options: ProveOptions,
    first_unsatisfied: impl Fn(usize) -> Result<Option<usize>, Groth16Error>,
) -> Result<(), Groth16Error> {
    if r_s.len() != circuits {
        return Err(Groth16Error::Randomness { got: r_s.len(), circuits });
    }
    if options.check_satisfied {
        for circuit in 0..circuits {
            if let Some(constraint) = first_unsatisfied(circuit)? {
                return Err(Groth16Error::Unsatisfied { circuit, constraint });
            }
        }
    }
    Ok(())
}

/// The epilogue of every proof, then (by default) their verification: no proof that does not
/// verify is returned. `inputs` are each circuit's public inputs, ONE first.
fn finish<P: Prover + ?Sized>(
    prover: &P,
    sums: &[Sums],
    inputs: &[&[Scalar]],
    r_s: &[(Scalar, Scalar)],
    options: ProveOptions,
    t: &mut Timings,
) -> Result<Vec<Proof>, Groth16Error> {
    let params = prover.parameters();
    let proofs: Vec<Proof> =
        timed(&mut t.epilogue, || sums.iter().zip(r_s).map(|(s, &(r, s_))| epilogue(params, s, r, s_)).collect());
    if options.verify {
        let pvk = PreparedVerifyingKey::new(&params.vk);
        let ok: Vec<bool> = timed(&mut t.verify, || {
            proofs.par_iter().zip(inputs).map(|(p, input)| verify_proof(&pvk, p, &input[1..])).collect::<Result<_, _>>()
        })?;
        if let Some(circuit) = ok.iter().position(|ok| !ok) {
            return Err(Groth16Error::ProofRejected { circuit, prover: prover.name() });
        }
    }
    Ok(proofs)
}

/// Checks that the circuits fit the parameters and each other, before any heavy work.
fn check_shapes(assignments: &[Assignment], params: &Parameters) -> Result<(), Groth16Error> {
    let Some(first) = assignments.first() else { return Ok(()) };
    let shape = |a: &Assignment| {
        [
            ("constraints", a.num_constraints()),
            ("public inputs", a.input.len()),
            ("aux variables", a.aux.len()),
            ("A aux density", a.a_aux_density.count_ones()),
            ("B input density", a.b_input_density.count_ones()),
            ("B aux density", a.b_aux_density.count_ones()),
        ]
    };
    let expected = shape(first);
    for (index, asg) in assignments.iter().enumerate().skip(1) {
        for ((what, got), (_, exp)) in shape(asg).into_iter().zip(expected) {
            if got != exp {
                return Err(Groth16Error::BatchShape { index, what, got, expected: exp });
            }
        }
    }
    check_shape(&expected.map(|(_, v)| v), params)
}

/// The counts [`check_shapes`] compares, of a recorded shape.
fn shape_counts(shape: &Shape) -> [usize; 6] {
    [
        shape.num_constraints(),
        shape.num_inputs(),
        shape.num_aux(),
        shape.a_aux_density().count_ones(),
        shape.b_input_density().count_ones(),
        shape.b_aux_density().count_ones(),
    ]
}

/// Checks one circuit shape's counts (constraints, inputs, aux, A aux, B input and B aux
/// densities) against the parameters.
fn check_shape(counts: &[usize; 6], params: &Parameters) -> Result<(), Groth16Error> {
    let [constraints, inputs, aux, a_aux, b_input, b_aux] = *counts;
    let domain = Domain::for_size(constraints)?;
    let checks = [
        ("H query length (domain size − 1)", domain.size() - 1, params.h.len()),
        ("number of public inputs incl. ONE (IC query)", inputs, params.vk.ic.len()),
        ("number of aux variables (L query)", aux, params.l.len()),
        ("A query length", inputs + a_aux, params.a.len()),
        ("B_G1 query length", b_input + b_aux, params.b_g1.len()),
        ("B_G2 query length", b_input + b_aux, params.b_g2.len()),
    ];
    for (what, circuit, params) in checks {
        if circuit != params {
            return Err(Groth16Error::ParamsMismatch { what, circuit, params });
        }
    }
    if bool::from(params.vk.delta_g1.is_identity() | params.vk.delta_g2.is_identity()) {
        return Err(Groth16Error::Degenerate("delta"));
    }
    Ok(())
}

/// A, B, C from the sums and (r, s).
fn epilogue(params: &Parameters, sums: &Sums, r: Scalar, s: Scalar) -> Proof {
    let vk = &params.vk;
    let delta_g1 = G1Projective::from(vk.delta_g1);
    let g_a = delta_g1 * r + vk.alpha_g1 + sums.a;
    let g_b = G2Projective::from(vk.delta_g2) * s + vk.beta_g2 + sums.b_g2;
    // B in G1 only matters through r·ΣB (bellperson skips it when r = 0; the product is the
    // identity either way).
    let g_c = sums.a * s
        + sums.b_g1 * r
        + delta_g1 * (r * s)
        + G1Projective::from(vk.alpha_g1) * s
        + G1Projective::from(vk.beta_g1) * r
        + sums.h
        + sums.l;
    Proof { a: g_a.to_affine(), b: g_b.to_affine(), c: g_c.to_affine() }
}

/// Adds the time since `start` to `phase`, returning its value for chaining.
pub(crate) fn timed<T>(phase: &mut Duration, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let v = f();
    *phase += start.elapsed();
    v
}

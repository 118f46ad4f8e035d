//! One proof on one lane: the query scalars staged, the sums over the witness beside the
//! host's a and b, then the H step (c = a∘b formed there) and the H MSM.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use group::Group;
use kiln_cuda::cudarc::driver::{CudaStream, PinnedHostSlice};
use kiln_cuda::{DeviceBuf, check_stream};
use kiln_field::DeviceLayout;
use kiln_lock::WorkerId;
use kiln_msm::gpu::{GpuBases, MsmContext, Scalars};
use kiln_ntt::gpu::{HostInput, Uploaded};
use rayon::prelude::*;

use super::host::{HostScalars, HostSet, Staged};
use super::job::{Ab, Job, gather_into};
use super::{GpuProver, Worker, panicked};
use crate::error::Groth16Error;
use crate::prover::{Sums, Timings, timed};

/// Σ over `bases` in chunks through `chunk` (the streamed SRS).
fn streamed_g1(
    ctx: &mut MsmContext,
    chunk: &mut GpuBases,
    cap: usize,
    bases: &[G1Affine],
    scalars: Scalars<'_>,
) -> Result<G1Projective, Groth16Error> {
    if scalars.len() != bases.len() {
        return Err(kiln_msm::MsmError::LengthMismatch { bases: bases.len(), scalars: scalars.len() }.into());
    }
    let mut acc = G1Projective::identity();
    for start in (0..bases.len()).step_by(cap.max(1)) {
        let end = (start + cap).min(bases.len());
        chunk.load_g1(ctx.stream(), &bases[start..end])?;
        let piece = scalars.range(start, end - start).expect("within the scalars: same length as the bases");
        acc += ctx.msm_g1(chunk, piece)?;
    }
    Ok(acc)
}

/// The G2 form of [`streamed_g1`].
fn streamed_g2(
    ctx: &mut MsmContext,
    chunk: &mut GpuBases,
    cap: usize,
    bases: &[G2Affine],
    scalars: &[Scalar],
) -> Result<G2Projective, Groth16Error> {
    let mut acc = G2Projective::identity();
    for start in (0..bases.len()).step_by(cap.max(1)) {
        let end = (start + cap).min(bases.len());
        chunk.load_g2(ctx.stream(), &bases[start..end])?;
        acc += ctx.msm_g2(chunk, Scalars::Host(&scalars[start..end]))?;
    }
    Ok(acc)
}

/// Σ scalars·bases over a resident G1 base set through the 0/1/other split.
fn split_g1(ctx: &mut MsmContext, bases: &GpuBases, scalars: Scalars<'_>) -> Result<G1Projective, Groth16Error> {
    if scalars.is_empty() {
        return Ok(G1Projective::identity());
    }
    let split = ctx.split(scalars)?;
    Ok(ctx.msm_g1_split(bases, &split)?)
}

/// How a resident query's pieces are summed.
#[derive(Clone, Copy)]
enum Sum {
    /// A plain MSM (H: uniform scalars).
    Dense,
    /// Through the 0/1/other split (L, A: witness values, mostly 0 and 1).
    Split,
}

/// Σ scalars·bases over a resident G1 query held in pieces ([`super::ResidentSrs`]): piece k's
/// scalars are the range at its offset.
fn sum_pieces(
    ctx: &mut MsmContext,
    pieces: &[GpuBases],
    scalars: Scalars<'_>,
    how: Sum,
) -> Result<G1Projective, Groth16Error> {
    let total: usize = pieces.iter().map(GpuBases::len).sum();
    if total != scalars.len() {
        return Err(kiln_msm::MsmError::LengthMismatch { bases: total, scalars: scalars.len() }.into());
    }
    let mut sum = G1Projective::identity();
    let mut start = 0;
    for bases in pieces {
        let part = if pieces.len() == 1 {
            scalars
        } else {
            scalars.range(start, bases.len()).ok_or_else(|| {
                kiln_msm::MsmError::InvalidArgument(
                    "page-locked scalars cannot be summed in pieces (a query longer than the domain)".into(),
                )
            })?
        };
        sum += match how {
            Sum::Dense => ctx.msm_g1(bases, part)?,
            Sum::Split => split_g1(ctx, bases, part)?,
        };
        start += bases.len();
    }
    Ok(sum)
}

/// Uploads page-locked scalars into `dev` on the `copy` stream and names them there, when they
/// fit; otherwise names the page-locked buffer (the sum uploads it on its own stream). The
/// launches that read `dev` wait for the copy (cudarc orders them by the buffer's events), and
/// the copy waits for the launches that used `dev` before.
fn park<'a>(
    copy: &Arc<CudaStream>,
    staged: &'a Staged,
    dev: &'a mut DeviceBuf<u64>,
) -> Result<Scalars<'a>, Groth16Error> {
    let Some(host) = staged.pinned().filter(|h| h.len() <= dev.len()) else { return Ok(staged.scalars()) };
    copy.memcpy_htod(host, &mut dev.slice_mut(0..host.len()))
        .map_err(|e| kiln_cuda::CudaError::driver("cuMemcpyHtoDAsync(scalars into a free vector)", e))?;
    let dev: &'a DeviceBuf<u64> = dev;
    Ok(Scalars::Device(dev, host.len() / <Scalar as DeviceLayout>::WORDS))
}

/// A proof's a and b in page-locked memory (c = a∘b is formed on the device:
/// [`HostInput::ProductOfAB`]).
type HostAb = [PinnedHostSlice<u64>; 2];

/// The uploads of a proof prepared ahead: its a and b are in page-locked memory before its
/// device work starts, so those whose device vector is free go up on the copy stream before
/// the sums, off the H step's path, which then takes them as [`HostInput::Uploaded`]: a (b and
/// c hold L's and A's scalars while the SRS is resident), or both (streamed SRS: its sums
/// read their scalars from the host).
struct EarlyUploads<'a> {
    host: Option<&'a HostAb>,
    done: [Option<Uploaded>; 2],
}

impl<'a> EarlyUploads<'a> {
    /// `host`: the proof's a and b if prepared ahead (`None`: every upload is the H step's).
    fn new(host: Option<&'a HostAb>) -> Self {
        EarlyUploads { host, done: [None, None] }
    }

    /// Enqueues vector `i`'s upload into `dev` now, if the proof was prepared ahead.
    fn start(
        &mut self,
        prover: &GpuProver,
        streams: (&Arc<CudaStream>, &Arc<CudaStream>),
        i: usize,
        dev: &mut DeviceBuf<u64>,
    ) -> Result<(), Groth16Error> {
        if let Some(host) = self.host {
            let (stream, copy) = streams;
            self.done[i] = Some(prover.state().domain.upload_input(stream, copy, &host[i], dev)?);
        }
        Ok(())
    }

    /// The H step's inputs: a and b uploaded early or from `host`, c formed on the device as
    /// a∘b (c for a satisfied constraint system; the proof is verified before it is returned).
    fn inputs<'h>(&mut self, host: &'h HostAb) -> [HostInput<'h>; 3] {
        let mut input = |i: usize| self.done[i].take().map_or(HostInput::Pinned(&host[i]), HostInput::Uploaded);
        [input(0), input(1), HostInput::ProductOfAB]
    }
}

/// One proof's a and b into the proof's pinned buffers (zero beyond the constraints): copied
/// from evaluated vectors, or evaluated there straight from a recorded shape. c is not needed:
/// the H step forms it on the device.
fn fill_ab(job: &Job<'_>, host_ab: &mut HostAb) -> Result<(), Groth16Error> {
    let mut views = Vec::with_capacity(2);
    for host in host_ab.iter_mut() {
        let words = host.as_mut_slice().map_err(|e| kiln_cuda::CudaError::driver("pinned buffer wait", e))?;
        views.push(Scalar::from_u64s_mut(words).map_err(kiln_ntt::NttError::from)?);
    }
    let [a, b]: [&mut [Scalar]; 2] = views.try_into().unwrap_or_else(|_| unreachable!("two buffers"));
    const PIECE: usize = 1 << 13;
    let m = match job.ab {
        Ab::Vectors(va, vb) => {
            for (dst, src) in [(&mut *a, va), (&mut *b, vb)] {
                dst[..src.len()]
                    .par_chunks_mut(PIECE)
                    .zip(src.par_chunks(PIECE))
                    .for_each(|(d, s)| d.copy_from_slice(s));
            }
            va.len()
        }
        Ab::Recorded(shape) => {
            let m = shape.num_constraints();
            shape.evaluate_ab_into(job.input, job.aux, &mut a[..m], &mut b[..m])?;
            m
        }
    };
    for dst in [a, b] {
        dst[m..].par_chunks_mut(PIECE).for_each(|d| d.fill(Scalar::ZERO));
    }
    Ok(())
}

/// B's scalars into their page-locked buffer, as the query holds its bases: B's dense inputs,
/// then B's dense aux (the memory phase: B_G1 and B_G2 start the compute phase).
fn stage_b(job: &Job<'_>, b: &mut Staged) -> Result<(), Groth16Error> {
    let b_inputs: Vec<Scalar> = job.b_input.iter_ones().map(|i| job.input[i]).collect();
    gather_into(b.view_mut()?, b_inputs.into_iter(), job.aux, Some(job.b_aux), "B scalars")
}

/// L's scalars (every aux value) and A's (all inputs, then A's dense aux) into their
/// page-locked buffers.
fn stage_l_a(job: &Job<'_>, l: &mut Staged, a: &mut Staged) -> Result<(), Groth16Error> {
    gather_into(l.view_mut()?, std::iter::empty(), job.aux, None, "aux scalars (L)")?;
    gather_into(a.view_mut()?, job.input.iter().copied(), job.aux, Some(job.a_aux), "A scalars")
}

impl GpuProver {
    /// The sums of one circuit, on the lane the policy hands to caller `worker` (one id per
    /// proving thread: [`GpuProver::caller`]).
    ///
    /// Order: the sums over the witness need only its scalars, so the device starts on them
    /// while the host prepares the rest: B's scalars are staged in the memory phase and B_G1
    /// and B_G2 (its own stream) start the compute phase while the host stages L's and A's;
    /// their sums follow while the host evaluates a and b; then the H step and the H MSM.
    /// (a, b, c first kept the device idle for each proof's evaluation, and at a batch's start
    /// for the first one's.)
    pub(super) fn sums_on(&self, worker: WorkerId, job: &Job<'_>, t: &mut Timings) -> Result<Sums, Groth16Error> {
        let state = self.state();
        // The proof's page-locked host buffers. With more proofs holding sets than there are
        // lanes, this one would wait for a lane: it does all of its host work first, beside
        // the others' device work.
        let mut set = state.host_sets.take();
        let ahead = set.in_use > state.workers.len();
        if ahead {
            self.prepared_ahead.fetch_add(1, Ordering::Relaxed);
        }
        let HostSet { ab: host_ab, scalars: HostScalars { aux: l_staged, a: a_staged, b: b_staged } } = &mut *set;
        if ahead {
            timed(&mut t.prepare, || -> Result<(), Groth16Error> {
                stage_b(job, b_staged)?;
                stage_l_a(job, l_staged, a_staged)?;
                fill_ab(job, host_ab)
            })?;
        }
        // The policy hands out a lane (an arena, its buffers and streams), held from the
        // uploads to the last sum; lanes run side by side, only the exclusive section (never
        // taken while proving) waits for them all.
        let memory = self.policy.memory(worker)?;
        let lane = memory.lane().unwrap_or(worker).min(state.workers.len() - 1);
        let mut guard = state.workers[lane].lock().unwrap_or_else(|e| e.into_inner());
        let Worker { stream, copy, abc, g1, g2, chunks } = &mut *guard;
        let p = &*self.params;
        let n = self.sizing.n;

        if !ahead {
            timed(&mut t.prepare, || stage_b(job, b_staged))?;
        }
        let compute = memory.into_compute()?;
        if self.fail_launch_on_input.is_some_and(|x| job.input.get(1) == Some(&x)) {
            return Err(super::fault::refused_launch(&self.device, stream));
        }

        let (g1_chunk, g2_chunk) = match chunks {
            Some((c1, c2)) => (Some(c1), Some(c2)),
            None => (None, None),
        };
        let srs = state.srs.as_ref();
        let g1_cap = g1.capacity();
        let g2_cap = g2.capacity();
        // The device's busy time: while a thread of this lane waits on its kernels and copies
        // (not while it waits for the host's a and b).
        let busy = &self.busy;
        let b_staged: &Staged = b_staged;
        std::thread::scope(|sc| -> Result<Sums, Groth16Error> {
            // B_G2 on its own stream and thread, beside everything below. B's page-locked
            // scalars are uploaded by both contexts (G1 and G2); the buffer is rewritten only
            // in the lane's next memory phase, after both sums were read back.
            let g2_job = sc.spawn(move || -> Result<(G2Projective, Duration), Groth16Error> {
                let _busy = busy.enter();
                let start = Instant::now();
                let sum = match (srs, g2_chunk) {
                    (Some(_), _) if b_staged.pinned().is_none() => G2Projective::identity(),
                    (Some(srs), _) => {
                        let split = g2.split(b_staged.scalars())?;
                        g2.msm_g2_split(&srs.b_g2, &split)?
                    }
                    (None, Some(chunk)) => streamed_g2(g2, chunk, g2_cap, &p.b_g2, b_staged.view()?)?,
                    (None, None) => unreachable!("a streamed worker has chunk buffers"),
                };
                Ok((sum, start.elapsed()))
            });
            // On the host, beside the device's sums (unless prepared ahead): L's and A's scalars
            // (handed over as soon as they are staged), then a and b (most of a proof's CPU
            // work; nothing reads them before the H step). Their time counts as preparation,
            // though it overlaps the device's work.
            let (staged_tx, staged_rx) = std::sync::mpsc::channel();
            let (to_fill, ready_ab) = if ahead { (None, Some(&*host_ab)) } else { (Some(host_ab), None) };
            let host_job = sc.spawn(move || -> Result<(Option<&HostAb>, Duration), Groth16Error> {
                let start = Instant::now();
                if to_fill.is_some() {
                    stage_l_a(job, l_staged, a_staged)?;
                }
                let (l, a): (&Staged, &Staged) = (l_staged, a_staged);
                // The receiver is gone only if the sums failed; a and b are then unused.
                let _ = staged_tx.send((l, a));
                let filled = match to_fill {
                    Some(ab) => {
                        fill_ab(job, ab)?;
                        Some(&*ab)
                    }
                    None => None,
                };
                Ok((filled, start.elapsed()))
            });
            let [a_dev, b_dev, c_dev] = abc;
            let mut early = EarlyUploads::new(ready_ab);
            let mut g1_chunk = g1_chunk;
            // Each sum's time, for the debug log (the phases add them up in pairs).
            let (mut l_time, mut a_time, mut b1_time, mut h_step_time, mut h_time) = Default::default();
            let b1_sum = {
                let _busy = busy.enter();
                timed(&mut b1_time, || match (srs, g1_chunk.as_deref_mut()) {
                    (Some(srs), _) => split_g1(g1, &srs.b_g1, b_staged.scalars()),
                    (None, Some(chunk)) => streamed_g1(g1, chunk, g1_cap, &p.b_g1, Scalars::Host(b_staged.view()?)),
                    (None, None) => unreachable!("a streamed worker has chunk buffers"),
                })?
            };
            // No L and A scalars: the host thread failed before staging them (its error).
            let Ok((l_staged, a_staged)) = staged_rx.recv() else {
                return Err(host_job.join().unwrap_or_else(|e| Err(panicked(e))).err().unwrap_or_else(|| {
                    unreachable!("the host thread sends the staged scalars before it can succeed")
                }));
            };
            let (l_sum, a_sum) = {
                let _busy = busy.enter();
                match (srs, g1_chunk.as_deref_mut()) {
                    (Some(srs), _) => {
                        // L's and A's scalars go up on the copy stream into b and c (free until
                        // the H step): A's copy runs beside L's sum.
                        let l_scalars = park(copy, l_staged, b_dev)?;
                        let a_scalars = park(copy, a_staged, c_dev)?;
                        // b goes up in the H step: early, after L's sum, it made the H step and
                        // the sums slower (docs/PERF.md, tenth session).
                        early.start(self, (stream, copy), 0, a_dev)?;
                        let l = timed(&mut l_time, || sum_pieces(g1, &srs.l, l_scalars, Sum::Split))?;
                        let a = timed(&mut a_time, || sum_pieces(g1, &srs.a, a_scalars, Sum::Split))?;
                        (l, a)
                    }
                    (None, Some(chunk)) => {
                        // The streamed sums take their scalars from the host: a and b are free.
                        for (i, dev) in [&mut *a_dev, &mut *b_dev].into_iter().enumerate() {
                            early.start(self, (stream, copy), i, dev)?;
                        }
                        let l = timed(&mut l_time, || {
                            streamed_g1(g1, chunk, g1_cap, &p.l, Scalars::Host(l_staged.view()?))
                        })?;
                        let a = timed(&mut a_time, || {
                            streamed_g1(g1, chunk, g1_cap, &p.a, Scalars::Host(a_staged.view()?))
                        })?;
                        (l, a)
                    }
                    (None, None) => unreachable!("a streamed worker has chunk buffers"),
                }
            };
            let (filled, evaluated) = host_job.join().unwrap_or_else(|e| Err(panicked(e)))?;
            t.prepare += evaluated;
            let h_sum = {
                let _busy = busy.enter();
                timed(&mut h_step_time, || -> Result<(), Groth16Error> {
                    let host = filled.or(ready_ab).expect("a and b filled ahead or by the host thread");
                    let input = early.inputs(host);
                    state.domain.h_step_from_host(stream, copy, input, [a_dev, b_dev, c_dev])?;
                    check_stream(stream)?;
                    Ok(())
                })?;
                timed(&mut h_time, || match (srs, g1_chunk) {
                    (Some(srs), _) => sum_pieces(g1, &srs.h, Scalars::Device(a_dev, n - 1), Sum::Dense),
                    (None, Some(chunk)) => streamed_g1(g1, chunk, g1_cap, &p.h, Scalars::Device(a_dev, n - 1)),
                    (None, None) => unreachable!("a streamed worker has chunk buffers"),
                })?
            };
            let (b2_sum, g2_time) = g2_job.join().unwrap_or_else(|e| Err(panicked(e)))?;
            t.h_poly += h_step_time;
            t.msm_h_l += h_time + l_time;
            t.msm_a_b_g1 += a_time + b1_time;
            t.msm_b_g2 += g2_time;
            let ms = |d: Duration| d.as_secs_f64() * 1e3;
            tracing::debug!(
                lane,
                ahead,
                l_ms = ms(l_time),
                a_ms = ms(a_time),
                b_g1_ms = ms(b1_time),
                b_g2_ms = ms(g2_time),
                ab_ms = ms(evaluated),
                h_step_ms = ms(h_step_time),
                h_ms = ms(h_time),
                "one proof's sums"
            );
            drop(compute);
            Ok(Sums { a: a_sum, b_g1: b1_sum, b_g2: b2_sum, h: h_sum, l: l_sum })
        })
    }
}

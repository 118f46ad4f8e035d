//! One proof on one lane: host preparation, the H step, the sums.

use std::time::{Duration, Instant};

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use group::Group;
use kiln_cuda::check_stream;
use kiln_cuda::cudarc::driver::CudaSlice;
use kiln_field::DeviceLayout;
use kiln_lock::WorkerId;
use kiln_msm::gpu::{GpuBases, MsmContext, Scalars};
use rayon::prelude::*;

use super::job::{Abc, Job, gather_into};
use super::{GpuProver, Worker, panicked};
use crate::error::Groth16Error;
use crate::prover::{Sums, Timings, timed};

/// Scalars of a streamed sum: host scalars, or a device vector (h).
#[derive(Clone, Copy)]
enum Source<'a> {
    Host(&'a [Scalar]),
    Device(&'a CudaSlice<u64>),
}

impl Source<'_> {
    fn range(&self, start: usize, end: usize) -> Scalars<'_> {
        match *self {
            Source::Host(s) => Scalars::Host(&s[start..end]),
            Source::Device(d) => Scalars::DeviceAt(d, start, end - start),
        }
    }
}

/// Σ over `bases` in chunks through `chunk` (the streamed SRS).
fn streamed_g1(
    ctx: &mut MsmContext,
    chunk: &mut GpuBases,
    cap: usize,
    bases: &[G1Affine],
    scalars: Source<'_>,
) -> Result<G1Projective, Groth16Error> {
    let mut acc = G1Projective::identity();
    for start in (0..bases.len()).step_by(cap.max(1)) {
        let end = (start + cap).min(bases.len());
        chunk.load_g1(ctx.stream(), &bases[start..end])?;
        acc += ctx.msm_g1(chunk, scalars.range(start, end))?;
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
fn split_g1(ctx: &mut MsmContext, bases: &GpuBases, scalars: &[Scalar]) -> Result<G1Projective, Groth16Error> {
    if scalars.is_empty() {
        return Ok(G1Projective::identity());
    }
    let split = ctx.split(Scalars::Host(scalars))?;
    Ok(ctx.msm_g1_split(bases, &split)?)
}

impl GpuProver {
    /// The sums of one circuit, on the lane the policy hands to caller `worker` (one id per
    /// proving thread: [`GpuProver::caller`]).
    pub(super) fn sums_on(&self, worker: WorkerId, job: &Job<'_>, t: &mut Timings) -> Result<Sums, Groth16Error> {
        let state = self.state();
        // The policy hands out a lane (an arena, its buffers and streams), held from the
        // uploads to the last sum; lanes run side by side, only the exclusive section (never
        // taken while proving) waits for them all.
        let memory = self.policy.memory(worker)?;
        let lane = memory.lane().unwrap_or(worker).min(state.workers.len() - 1);
        let mut guard = state.workers[lane].lock().unwrap_or_else(|e| e.into_inner());
        let Worker { stream, copy, abc, host_abc, g1, g2, chunks, a_scalars, b_scalars } = &mut *guard;
        let p = &*self.params;
        let n = self.sizing.n;

        // Host preparation: a, b, c into the pinned buffers (zero beyond the constraints), and
        // the scalars of the A and B queries (all inputs then A's dense aux; B's dense inputs
        // then B's dense aux, as the queries hold their bases).
        timed(&mut t.prepare, || -> Result<_, Groth16Error> {
            let mut views = Vec::with_capacity(3);
            for host in host_abc.iter_mut() {
                let words = host.as_mut_slice().map_err(|e| kiln_cuda::CudaError::driver("pinned buffer wait", e))?;
                views.push(Scalar::from_u64s_mut(words).map_err(kiln_ntt::NttError::from)?);
            }
            let [a, b, c]: [&mut [Scalar]; 3] = views.try_into().unwrap_or_else(|_| unreachable!("three buffers"));
            const PIECE: usize = 1 << 13;
            let m = match job.abc {
                Abc::Vectors(va, vb, vc) => {
                    for (dst, src) in [(&mut *a, va), (&mut *b, vb), (&mut *c, vc)] {
                        dst[..src.len()]
                            .par_chunks_mut(PIECE)
                            .zip(src.par_chunks(PIECE))
                            .for_each(|(d, s)| d.copy_from_slice(s));
                    }
                    va.len()
                }
                Abc::Recorded(shape) => {
                    let m = shape.num_constraints();
                    shape.evaluate_into(job.input, job.aux, &mut a[..m], &mut b[..m], &mut c[..m])?;
                    m
                }
            };
            for dst in [a, b, c] {
                dst[m..].par_chunks_mut(PIECE).for_each(|d| d.fill(Scalar::ZERO));
            }
            let d = &job.dense;
            gather_into(a_scalars, job.input.iter().copied(), job.aux, &d.a_aux);
            gather_into(b_scalars, d.b_input.iter().map(|&i| job.input[i as usize]), job.aux, &d.b_aux);
            Ok(())
        })?;
        let compute = memory.into_compute()?;
        // The device's busy time: from here to the last sum (the lane's kernels and copies).
        let _busy = self.busy.enter();
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

        std::thread::scope(|sc| -> Result<Sums, Groth16Error> {
            // B_G2 on its own stream and thread, beside everything below.
            let b_scalars: &[Scalar] = b_scalars;
            let a_scalars: &[Scalar] = a_scalars;
            let g2_job = sc.spawn(move || -> Result<(G2Projective, Duration), Groth16Error> {
                let start = Instant::now();
                let sum = match (srs, g2_chunk) {
                    (Some(_), _) if b_scalars.is_empty() => G2Projective::identity(),
                    (Some(srs), _) => {
                        let split = g2.split(Scalars::Host(b_scalars))?;
                        g2.msm_g2_split(&srs.b_g2, &split)?
                    }
                    (None, Some(chunk)) => streamed_g2(g2, chunk, g2_cap, &p.b_g2, b_scalars)?,
                    (None, None) => unreachable!("a streamed worker has chunk buffers"),
                };
                Ok((sum, start.elapsed()))
            });

            let [a_dev, b_dev, c_dev] = abc;
            timed(&mut t.h_poly, || -> Result<(), Groth16Error> {
                let [ha, hb, hc] = &*host_abc;
                state.domain.h_step_from_host(stream, copy, ha, hb, hc, a_dev, b_dev, c_dev)?;
                check_stream(stream)?;
                Ok(())
            })?;
            let mut g1_chunk = g1_chunk;
            let (h_sum, l_sum) = timed(&mut t.msm_h_l, || -> Result<_, Groth16Error> {
                match (srs, g1_chunk.as_deref_mut()) {
                    (Some(srs), _) => {
                        let h = g1.msm_g1(&srs.h, Scalars::Device(a_dev, n - 1))?;
                        Ok((h, split_g1(g1, &srs.l, job.aux)?))
                    }
                    (None, Some(chunk)) => {
                        let h = streamed_g1(g1, chunk, g1_cap, &p.h, Source::Device(a_dev))?;
                        let l = streamed_g1(g1, chunk, g1_cap, &p.l, Source::Host(job.aux))?;
                        Ok((h, l))
                    }
                    (None, None) => unreachable!("a streamed worker has chunk buffers"),
                }
            })?;
            let (a_sum, b1_sum) = timed(&mut t.msm_a_b_g1, || -> Result<_, Groth16Error> {
                match (srs, g1_chunk) {
                    (Some(srs), _) => Ok((split_g1(g1, &srs.a, a_scalars)?, split_g1(g1, &srs.b_g1, b_scalars)?)),
                    (None, Some(chunk)) => Ok((
                        streamed_g1(g1, chunk, g1_cap, &p.a, Source::Host(a_scalars))?,
                        streamed_g1(g1, chunk, g1_cap, &p.b_g1, Source::Host(b_scalars))?,
                    )),
                    (None, None) => unreachable!("a streamed worker has chunk buffers"),
                }
            })?;
            let (b2_sum, g2_time) = g2_job.join().unwrap_or_else(|e| Err(panicked(e)))?;
            t.msm_b_g2 += g2_time;
            drop(compute);
            Ok(Sums { a: a_sum, b_g1: b1_sum, b_g2: b2_sum, h: h_sum, l: l_sum })
        })
    }
}

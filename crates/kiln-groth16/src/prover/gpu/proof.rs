//! One proof on one lane: host preparation, the H step, the sums.

use std::sync::Arc;
use std::time::{Duration, Instant};

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use group::Group;
use kiln_cuda::cudarc::driver::{CudaSlice, CudaStream};
use kiln_cuda::{DeviceBuf, check_stream};
use kiln_field::DeviceLayout;
use kiln_lock::WorkerId;
use kiln_msm::gpu::{GpuBases, MsmContext, Scalars};
use rayon::prelude::*;

use super::job::{Abc, Job, gather_into};
use super::{GpuProver, HostScalars, Staged, Worker, panicked};
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
fn split_g1(ctx: &mut MsmContext, bases: &GpuBases, scalars: Scalars<'_>) -> Result<G1Projective, Groth16Error> {
    if scalars.is_empty() {
        return Ok(G1Projective::identity());
    }
    let split = ctx.split(scalars)?;
    Ok(ctx.msm_g1_split(bases, &split)?)
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
        let Worker { stream, copy, abc, host_abc, g1, g2, chunks, host_scalars } = &mut *guard;
        let p = &*self.params;
        let n = self.sizing.n;

        // Host preparation: a, b, c into the pinned buffers (zero beyond the constraints), and
        // the scalars of the L, A and B queries into theirs (L: aux; A: all inputs then A's
        // dense aux; B: B's dense inputs then B's dense aux, as the queries hold their bases).
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
            // B's scalars now: B_G2 starts with the compute phase. L's and A's are gathered
            // while the H step runs (below).
            let b_inputs = job.dense.b_input.iter().map(|&i| job.input[i as usize]);
            gather_into(host_scalars.b.view_mut()?, b_inputs, job.aux, Some(&job.dense.b_aux), "B scalars")?;
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

        let HostScalars { aux: aux_staged, a: a_staged, b: b_staged } = host_scalars;
        let b_staged: &Staged = b_staged;
        std::thread::scope(|sc| -> Result<Sums, Groth16Error> {
            // B_G2 on its own stream and thread, beside everything below. B's page-locked
            // scalars are uploaded by both contexts (G1 and G2); the buffer is rewritten only
            // in the lane's next memory phase, after both sums were read back.
            let g2_job = sc.spawn(move || -> Result<(G2Projective, Duration), Groth16Error> {
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

            // L's and A's scalars (most of the host's copying) are gathered on the host while
            // the H step runs on the device: nothing reads them before it is done. Their time
            // counts as preparation, though it overlaps the device's work.
            let gather = sc.spawn(move || -> Result<(&Staged, &Staged, Duration), Groth16Error> {
                let start = Instant::now();
                let d = &job.dense;
                gather_into(aux_staged.view_mut()?, std::iter::empty(), job.aux, None, "aux scalars (L)")?;
                gather_into(a_staged.view_mut()?, job.input.iter().copied(), job.aux, Some(&d.a_aux), "A scalars")?;
                let (aux_staged, a_staged): (&Staged, &Staged) = (aux_staged, a_staged);
                Ok((aux_staged, a_staged, start.elapsed()))
            });
            let [a_dev, b_dev, c_dev] = abc;
            timed(&mut t.h_poly, || -> Result<(), Groth16Error> {
                let [ha, hb, hc] = &*host_abc;
                state.domain.h_step_from_host(stream, copy, ha, hb, hc, a_dev, b_dev, c_dev)?;
                check_stream(stream)?;
                Ok(())
            })?;
            let (aux_staged, a_staged, gathered) = gather.join().unwrap_or_else(|e| Err(panicked(e)))?;
            t.prepare += gathered;
            let mut g1_chunk = g1_chunk;
            let (h_sum, l_sum, a_scalars) = timed(&mut t.msm_h_l, || -> Result<_, Groth16Error> {
                match (srs, g1_chunk.as_deref_mut()) {
                    (Some(srs), _) => {
                        // L's and A's scalars go up on the copy stream into b and c (free once
                        // the H step is done) while the H MSM runs on h in a.
                        let l_scalars = park(copy, aux_staged, b_dev)?;
                        let a_scalars = park(copy, a_staged, c_dev)?;
                        let h = g1.msm_g1(&srs.h, Scalars::Device(a_dev, n - 1))?;
                        Ok((h, split_g1(g1, &srs.l, l_scalars)?, Some(a_scalars)))
                    }
                    (None, Some(chunk)) => {
                        let h = streamed_g1(g1, chunk, g1_cap, &p.h, Source::Device(a_dev))?;
                        let aux = aux_staged.view()?;
                        let l = streamed_g1(g1, chunk, g1_cap, &p.l, Source::Host(aux))?;
                        Ok((h, l, None))
                    }
                    (None, None) => unreachable!("a streamed worker has chunk buffers"),
                }
            })?;
            let (a_sum, b1_sum) = timed(&mut t.msm_a_b_g1, || -> Result<_, Groth16Error> {
                match (srs, g1_chunk, a_scalars) {
                    (Some(srs), _, Some(a_scalars)) => {
                        Ok((split_g1(g1, &srs.a, a_scalars)?, split_g1(g1, &srs.b_g1, b_staged.scalars())?))
                    }
                    (None, Some(chunk), _) => Ok((
                        streamed_g1(g1, chunk, g1_cap, &p.a, Source::Host(a_staged.view()?))?,
                        streamed_g1(g1, chunk, g1_cap, &p.b_g1, Source::Host(b_staged.view()?))?,
                    )),
                    _ => unreachable!("resident: A's scalars parked; streamed: chunk buffers"),
                }
            })?;
            let (b2_sum, g2_time) = g2_job.join().unwrap_or_else(|e| Err(panicked(e)))?;
            t.msm_b_g2 += g2_time;
            drop(compute);
            Ok(Sums { a: a_sum, b_g1: b1_sum, b_g2: b2_sum, h: h_sum, l: l_sum })
        })
    }
}

//! The GPU path: in-place transforms and the whole H step on data already on the device.
//!
//! Data is `n` scalars in blstrs' layout (Montgomery form, 4 little-endian `u64` each) in a
//! `CudaSlice<u64>` of `4n` words. Every call only enqueues work on the given stream (no
//! allocation, no synchronisation), so it fits the compute phase of ARCHITECTURE.md §3.
//!
//! What each operation launches is the list of [`crate::launch::Schedule`] (shared with the
//! host emulation tests), issued here in order. Orders: the forward-style pass (DIF) takes
//! natural order and leaves bit-reversed order; the inverse-style pass (DIT) does the
//! opposite. The four plain directions are a DIF and one bit-reversal pass. The H step chains
//! DIF (iNTT, leaving bit-reversed coefficients already multiplied by `g^i/n`) → DIT (coset
//! NTT, natural evaluations) for each of a, b, c, one pointwise pass, then DIF (coset iNTT,
//! scaled by `g^-i/n`) → bit reversal: seven transforms and only one bit-reversal pass.
//!
//! [`GpuDomain::h_step_from_host`] is the H step for a caller that streams its input from
//! pinned host memory: a, b, c are uploaded on a second (copy) stream, and the transforms of
//! a start as soon as a has arrived, while b and c are still on the bus. c may instead be
//! formed on the device as a∘b ([`HostInput::ProductOfAB`]), which it is for a satisfied
//! constraint system: the host then neither evaluates nor uploads it.
//!
//! Host ↔ device conversion of scalars: `kiln_field::DeviceLayout` (`Scalar::as_u64s`,
//! `Scalar::from_u64s`).

use std::sync::Arc;

use blstrs::Scalar;
use cudarc::driver::{CudaEvent, CudaFunction, CudaSlice, CudaStream, LaunchConfig, PinnedHostSlice, PushKernelArg};
use kiln_cuda::{CudaResultExt, Device, DeviceBuf, DeviceMemory};
use kiln_field::{DeviceLayout, LayoutError};

use crate::launch::{Dims, Launch, Schedule, Transform, Vector};
use crate::plan::{Layout, PassKernel};
use crate::{Domain, NttError};

/// u64 words per scalar.
const WORDS: usize = <Scalar as DeviceLayout>::WORDS;

/// One input of [`GpuDomain::h_step_from_host`].
pub enum HostInput<'a> {
    /// In pinned host memory: uploaded by the H step.
    Pinned(&'a PinnedHostSlice<u64>),
    /// Already enqueued by [`GpuDomain::upload_input`]: the vector's transforms wait for that
    /// copy only.
    Uploaded(Uploaded),
    /// c only: formed on the device as a∘b (element by element) before a's and b's
    /// transforms. For a satisfied constraint system c_i = a_i·b_i for every row (the input
    /// rows and the padding are 0 = x·0), so the H step is the same as with c from the host;
    /// for an unsatisfied one the proof does not verify either way.
    ProductOfAB,
}

/// An H step input's upload, enqueued ahead of the H step ([`GpuDomain::upload_input`]): the
/// event its copy records.
pub struct Uploaded(CudaEvent);

impl std::fmt::Debug for Uploaded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Uploaded")
    }
}

/// Extra device bytes [`GpuDomain::h_step`] needs beyond a, b and c themselves: the resident
/// twiddle tables of the domain, 16 bytes per point (`ω^x` for every `x <= n/2`: 2 GiB at 2^27)
/// plus a few hundred KiB. Held once per [`GpuDomain`], which workers share. For the VRAM planner.
pub fn h_step_bytes(log_n: u32) -> usize {
    Layout::new(log_n).len as usize * std::mem::size_of::<Scalar>()
}

/// A domain on one device: twiddle tables resident in device memory, built once per
/// `(device, log_n)`, and the loaded kernels. Cheap to share (`Arc`) between workers:
/// the tables are only read.
pub struct GpuDomain {
    domain: Domain,
    schedule: Schedule,
    tw: DeviceBuf<u64>,
    /// The pass kernels, at [`PassKernel::index`] (order, radix, direction).
    passes: [CudaFunction; 8],
    bitrev: CudaFunction,
    twiddles: CudaFunction,
    pointwise: CudaFunction,
    mul: CudaFunction,
}

impl std::fmt::Debug for GpuDomain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuDomain").field("log_n", &self.domain.log_size()).finish_non_exhaustive()
    }
}

impl GpuDomain {
    /// Computes the small tables of `domain` on the host, uploads them on `stream` and fills
    /// the table of all roots from them on the device (waits for both, so the host copy can
    /// go). Takes [`h_step_bytes`] bytes from `mem`: do it at start-up, not on the proving path.
    pub fn new(
        device: &Arc<Device>,
        stream: &Arc<CudaStream>,
        domain: &Domain,
        mem: &impl DeviceMemory,
    ) -> Result<GpuDomain, NttError> {
        let schedule = Schedule::new(domain.log_size());
        let layout = schedule.layout;
        let values = layout.values(domain);
        let mut tw = mem.take_poisoned::<u64>(stream, layout.len as usize * WORDS, "ntt twiddles")?;
        stream
            .memcpy_htod(Scalar::as_u64s(&values), &mut tw.slice_mut(..values.len() * WORDS))
            .ctx("cuMemcpyHtoDAsync(ntt twiddles)")?;
        let gd = GpuDomain {
            domain: domain.clone(),
            schedule,
            tw,
            passes: {
                let loaded: Vec<CudaFunction> =
                    PassKernel::ALL.iter().map(|k| device.kernel(k.kernel())).collect::<Result<_, _>>()?;
                loaded.try_into().unwrap_or_else(|_| unreachable!("one function per pass kernel"))
            },
            bitrev: device.kernel(kiln_kernels::ntt::BITREV)?,
            twiddles: device.kernel(kiln_kernels::ntt::TWIDDLES)?,
            pointwise: device.kernel(kiln_kernels::ntt::POINTWISE)?,
            mul: device.kernel(kiln_kernels::ntt::MUL)?,
        };
        // `ω^x` for every `x <= n/2` from the uploaded small tables.
        gd.issue(stream, &gd.schedule.twiddles(), &mut [], None)?;
        kiln_cuda::check_stream(stream)?;
        Ok(gd)
    }

    /// The host domain.
    pub fn domain(&self) -> &Domain {
        &self.domain
    }

    /// Device bytes held by the tables.
    pub fn resident_bytes(&self) -> usize {
        h_step_bytes(self.domain.log_size())
    }

    fn check(&self, a: &CudaSlice<u64>, what: &'static str) -> Result<(), NttError> {
        let expected = self.domain.size() * WORDS;
        if a.len() != expected {
            return Err(NttError::LengthMismatch { what, expected: self.domain.size(), got: a.len() / WORDS });
        }
        Ok(())
    }

    /// `fft`: coefficients → evaluations on the domain, natural order, in place.
    pub fn forward(&self, stream: &Arc<CudaStream>, a: &mut CudaSlice<u64>) -> Result<(), NttError> {
        self.transform(stream, a, Transform::Forward, "gpu::forward")
    }

    /// `ifft`: evaluations → coefficients, natural order, in place (the `1/n` is fused).
    pub fn inverse(&self, stream: &Arc<CudaStream>, a: &mut CudaSlice<u64>) -> Result<(), NttError> {
        self.transform(stream, a, Transform::Inverse, "gpu::inverse")
    }

    /// `coset_fft`: coefficients → evaluations on the coset `g·H` (the `g^i` is fused).
    pub fn coset_forward(&self, stream: &Arc<CudaStream>, a: &mut CudaSlice<u64>) -> Result<(), NttError> {
        self.transform(stream, a, Transform::CosetForward, "gpu::coset_forward")
    }

    /// `icoset_fft`: evaluations on the coset → coefficients (the `g^-i/n` is fused).
    pub fn coset_inverse(&self, stream: &Arc<CudaStream>, a: &mut CudaSlice<u64>) -> Result<(), NttError> {
        self.transform(stream, a, Transform::CosetInverse, "gpu::coset_inverse")
    }

    fn transform(
        &self,
        stream: &Arc<CudaStream>,
        a: &mut CudaSlice<u64>,
        t: Transform,
        what: &'static str,
    ) -> Result<(), NttError> {
        self.check(a, what)?;
        self.issue(stream, &self.schedule.transform(t), &mut [a], None)
    }

    /// The Groth16 H step on the device: `a`, `b`, `c` (evaluations on the domain, natural
    /// order, zero-padded to `n`) → `h` in `a` (n coefficients, natural order, ready for the
    /// H MSM over the first n - 1). `b` and `c` are overwritten (used as work space). Needs no
    /// device memory beyond a, b, c and the resident tables ([`h_step_bytes`]).
    pub fn h_step(
        &self,
        stream: &Arc<CudaStream>,
        a: &mut CudaSlice<u64>,
        b: &mut CudaSlice<u64>,
        c: &mut CudaSlice<u64>,
    ) -> Result<(), NttError> {
        self.check(a, "gpu::h_step a")?;
        self.check(b, "gpu::h_step b")?;
        self.check(c, "gpu::h_step c")?;
        self.h_step_after(stream, [a, b, c], None, false)
    }

    /// The H step with its input streamed from pinned host memory: each of a, b, c given as
    /// [`HostInput::Pinned`] (scalars as `u64` words, see [`DeviceLayout::as_u64s`]; at most
    /// `n` scalars, zero-padded to `n` on the device) is uploaded into its device vector on
    /// `copy_stream`, one copy and one event per vector, and the H step runs on `stream`, each
    /// vector's transforms waiting only for that vector's copy: the 2 transforms of a (about
    /// 2/7 of the work) overlap the uploads of b and c. A vector given as
    /// [`HostInput::Uploaded`] was enqueued earlier on `copy_stream` by
    /// [`GpuDomain::upload_input`] (its transforms wait for that copy). `h` ends in `a` as with
    /// [`GpuDomain::h_step`]; everything later on `stream` sees it.
    ///
    /// Only enqueues work. `copy_stream` first waits for the work already on `stream` (which
    /// may still use a, b, c). The pinned buffers record the copies (cudarc's per-buffer
    /// event): writing or dropping them waits until the copies are done, so they can be
    /// refilled for the next proof at once. `copy_stream` must be another stream of the same
    /// device (`Device::new_stream`); with `copy_stream == stream` it is correct but nothing
    /// overlaps.
    pub fn h_step_from_host(
        &self,
        stream: &Arc<CudaStream>,
        copy_stream: &Arc<CudaStream>,
        host: [HostInput<'_>; 3],
        [a, b, c]: [&mut CudaSlice<u64>; 3],
    ) -> Result<(), NttError> {
        self.check(a, "gpu::h_step_from_host a")?;
        self.check(b, "gpu::h_step_from_host b")?;
        self.check(c, "gpu::h_step_from_host c")?;
        let whats = ["gpu::h_step_from_host a_host", "gpu::h_step_from_host b_host", "gpu::h_step_from_host c_host"];
        for (i, (h, what)) in host.iter().zip(whats).enumerate() {
            match h {
                HostInput::Pinned(h) => self.check_input(h, what)?,
                HostInput::ProductOfAB if i != 2 => return Err(NttError::MisplacedProduct { what }),
                _ => {}
            }
        }
        let c_from_ab = matches!(host[2], HostInput::ProductOfAB);
        let mut ready = Vec::with_capacity(3);
        for (h, d) in host.into_iter().zip([&mut *a, &mut *b, &mut *c]) {
            ready.push(match h {
                HostInput::Pinned(h) => Some(self.upload_input(stream, copy_stream, h, d)?.0),
                HostInput::Uploaded(Uploaded(event)) => Some(event),
                // Written on `stream` itself, after the work already there.
                HostInput::ProductOfAB => None,
            });
        }
        let ready: [Option<CudaEvent>; 3] =
            ready.try_into().unwrap_or_else(|_| unreachable!("three vectors, three events"));
        self.h_step_after(stream, [a, b, c], Some(ready), c_from_ab)
    }

    /// Enqueues the upload of one H step input (`host`, at most `n` scalars, zero-padded to
    /// `n`) into `dev` on `copy_stream`, after the work already on `stream` (which may still
    /// read `dev`): pass the result later as [`HostInput::Uploaded`] to
    /// [`GpuDomain::h_step_from_host`] with the same streams and `dev`, which nothing may
    /// write in between. Lets a caller whose input is ready early move its copy off the H
    /// step's critical path.
    pub fn upload_input(
        &self,
        stream: &Arc<CudaStream>,
        copy_stream: &Arc<CudaStream>,
        host: &PinnedHostSlice<u64>,
        dev: &mut CudaSlice<u64>,
    ) -> Result<Uploaded, NttError> {
        self.check(dev, "gpu::upload_input dev")?;
        self.check_input(host, "gpu::upload_input host")?;
        // Write-after-read: earlier work on `stream` (the previous proof's H step or MSM) may
        // still read `dev`; the upload must not overwrite it before that is done.
        copy_stream.join(stream).ctx("cuStreamWaitEvent(h step copies after compute)")?;
        let words = host.len();
        if words > 0 {
            copy_stream.memcpy_htod(host, &mut dev.slice_mut(..words)).ctx("cuMemcpyHtoDAsync(h step input)")?;
        }
        if words < dev.len() {
            copy_stream.memset_zeros(&mut dev.slice_mut(words..)).ctx("cuMemsetD8Async(h step zero padding)")?;
        }
        Ok(Uploaded(copy_stream.record_event(None).ctx("cuEventRecord(h step input copied)")?))
    }

    /// A host input's length: whole scalars, at most `n`.
    fn check_input(&self, host: &PinnedHostSlice<u64>, what: &'static str) -> Result<(), NttError> {
        let words = host.len();
        if words % WORDS != 0 {
            return Err(NttError::Layout(LayoutError::Ragged { len: words, ty: "fr_t", per: WORDS }));
        }
        if words / WORDS > self.domain.size() {
            return Err(NttError::InputTooLong { what, len: words / WORDS, size: self.domain.size() });
        }
        Ok(())
    }

    /// The H step's launches (c formed as a∘b with `c_from_ab`); vector i's first launch
    /// waits for `ready[i]` when given.
    fn h_step_after(
        &self,
        stream: &Arc<CudaStream>,
        [a, b, c]: [&mut CudaSlice<u64>; 3],
        ready: Option<[Option<CudaEvent>; 3]>,
        c_from_ab: bool,
    ) -> Result<(), NttError> {
        self.issue(stream, &self.schedule.h_step(c_from_ab), &mut [a, b, c], ready.as_ref())
    }

    /// Enqueues `launches` on `stream`, vector `v` of each being `vectors[v]`. With `ready`,
    /// the first launch that uses vector `v` first waits for `ready[v]`.
    fn issue(
        &self,
        stream: &Arc<CudaStream>,
        launches: &[Launch],
        vectors: &mut [&mut CudaSlice<u64>],
        ready: Option<&[Option<CudaEvent>; 3]>,
    ) -> Result<(), NttError> {
        let mut waited = [false; 3];
        for launch in launches {
            if let Some(ready) = ready {
                for v in [Vector::A, Vector::B, Vector::C] {
                    if launch.uses(v) && !waited[v as usize] {
                        if let Some(event) = &ready[v as usize] {
                            // Explicit even though cudarc's per-buffer events may already order
                            // this: they can be disabled per context (disable_event_tracking).
                            stream.wait(event).ctx("cuStreamWaitEvent(h step input copied)")?;
                        }
                        waited[v as usize] = true;
                    }
                }
            }
            self.launch(stream, launch, vectors)?;
        }
        Ok(())
    }

    /// Enqueues one launch.
    fn launch(
        &self,
        stream: &Arc<CudaStream>,
        launch: &Launch,
        vectors: &mut [&mut CudaSlice<u64>],
    ) -> Result<(), NttError> {
        let cfg = |d: Dims| LaunchConfig {
            grid_dim: (d.grid, 1, 1),
            block_dim: (d.block, 1, 1),
            shared_mem_bytes: d.shared_bytes,
        };
        match launch {
            Launch::Twiddles { dims, roots, w_lo, w_hi, w_lo_bits, half_n } => {
                let mut b = stream.launch_builder(&self.twiddles);
                b.arg(&*self.tw).arg(roots).arg(w_lo).arg(w_hi).arg(w_lo_bits).arg(half_n);
                // SAFETY: matches `ntt_twiddles(fr_t*, u32 × 5)`; `tw` holds `layout.len` scalars, the
                // roots table [roots, roots + half_n] and the small tables it reads are within it
                // (plan::Layout); the kernel bounds-checks x <= half_n. Nothing else uses `tw` yet
                // (it is only launched at construction).
                unsafe { b.launch(cfg(*dims)) }.ctx("cuLaunchKernel(ntt_twiddles)")?;
            }
            Launch::Pass { v, kernel, dims, args: p } => {
                let a = &mut *vectors[*v as usize];
                let mut b = stream.launch_builder(&self.passes[kernel.index()]);
                b.arg(a)
                    .arg(&*self.tw)
                    .arg(&p.log_n)
                    .arg(&p.l)
                    .arg(&p.ks)
                    .arg(&p.log_g)
                    .arg(&p.roots)
                    .arg(&p.scale_at)
                    .arg(&p.scale_mode)
                    .arg(&p.s_lo)
                    .arg(&p.s_hi)
                    .arg(&p.s_lo_bits)
                    .arg(&p.s_bitrev);
                // SAFETY: the arguments match `ntt_pass_*(fr_t*, const fr_t*, u32 × 11)`; the vector
                // holds 2^log_n scalars (checked by the caller), the pass satisfies the kernel's
                // preconditions (plan::passes, which also picks the kernel of its round radix:
                // launch_dims gives one thread per group of that radix, within the kernel's launch
                // bounds) and gets the dynamic shared memory it indexes (32 bytes per point, at most
                // 32 KiB: no opt-in needed), and every table offset is within `tw` (plan::Layout).
                unsafe { b.launch(cfg(*dims)) }.ctx("cuLaunchKernel(ntt_pass_*)")?;
            }
            Launch::Bitrev { v, dims, log_n, b: tile } => {
                let a = &mut *vectors[*v as usize];
                let mut b = stream.launch_builder(&self.bitrev);
                b.arg(a).arg(log_n).arg(tile);
                // SAFETY: matches `ntt_bitrev(fr_t*, u32, u32)`; the vector holds 2^log_n scalars;
                // the grid and b are the kernel's requirements (plan::bitrev_tiles), under which
                // every index it forms is below 2^log_n; its shared memory is static.
                unsafe { b.launch(cfg(*dims)) }.ctx("cuLaunchKernel(ntt_bitrev)")?;
            }
            Launch::Pointwise { dims, z_inv, n } => {
                let [a, b, c] = vectors else { unreachable!("the pointwise launch is the H step's, on a, b, c") };
                let mut l = stream.launch_builder(&self.pointwise);
                l.arg(&mut **a).arg(&**b).arg(&**c).arg(&*self.tw).arg(z_inv).arg(n);
                // SAFETY: matches `ntt_pointwise(fr_t*, const fr_t*, const fr_t*, const fr_t*, u32, u32)`;
                // a, b, c hold n scalars; z_inv is within `tw`; the kernel bounds-checks i < n.
                unsafe { l.launch(cfg(*dims)) }.ctx("cuLaunchKernel(ntt_pointwise)")?;
            }
            Launch::Copy { from, to } => {
                let (src, dst) = pair(vectors, *from, *to);
                stream.memcpy_dtod(src, dst).ctx("cuMemcpyDtoDAsync(h step vector)")?;
            }
            Launch::Mul { v, by, dims, n } => {
                let (y, x) = pair(vectors, *by, *v);
                let mut l = stream.launch_builder(&self.mul);
                l.arg(x).arg(y).arg(n);
                // SAFETY: matches `ntt_mul(fr_t*, const fr_t*, u32)`; both vectors hold n scalars
                // (checked by the caller) and are distinct; the kernel bounds-checks i < n.
                unsafe { l.launch(cfg(*dims)) }.ctx("cuLaunchKernel(ntt_mul)")?;
            }
        }
        Ok(())
    }
}

/// Vector `read` (shared) and vector `write` (exclusive) of `vectors`; `read != write`.
fn pair<'v>(
    vectors: &'v mut [&mut CudaSlice<u64>],
    read: Vector,
    write: Vector,
) -> (&'v CudaSlice<u64>, &'v mut CudaSlice<u64>) {
    let (r, w) = (read as usize, write as usize);
    assert_ne!(r, w, "a launch that reads and writes one vector through two names");
    if r < w {
        let (lo, hi) = vectors.split_at_mut(w);
        (&*lo[r], &mut *hi[0])
    } else {
        let (lo, hi) = vectors.split_at_mut(r);
        (&*hi[0], &mut *lo[w])
    }
}

//! GPU test entry points: every field and curve operation of `kernels/field` and
//! `kernels/curve` as a batch kernel over slices of blstrs values, so tests can compare the
//! device with blstrs. Outputs are poisoned before each launch; every CUDA status is checked.
//!
//! These are for tests and diagnostics (one stream, synchronous), not for the proving path.

use std::sync::Arc;

use blstrs::{Fp, Fp2, G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use kiln_cuda::cudarc::driver::{CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
use kiln_cuda::{CudaError, CudaResultExt, Device, Result, alloc_poisoned, check_stream};
use kiln_kernels::Kernel;
use kiln_kernels::curve::tests as curve_tests;
use kiln_kernels::field::tests;

use crate::DeviceLayout;

/// Field operations of `field_tests` (op codes of `kernels/field/tests.cu`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum FieldOp {
    /// a + b
    Add = 0,
    /// a - b
    Sub = 1,
    /// -a
    Neg = 2,
    /// 2a
    Dbl = 3,
    /// a * b
    Mul = 4,
    /// a²
    Sqr = 5,
    /// 1/a (0 → 0)
    Inv = 6,
    /// plain integer a → Montgomery form (a·R)
    ToMont = 7,
    /// Montgomery form a → plain integer (a/R)
    FromMont = 8,
    /// a^e with e = the lowest 32-bit limb of b's internal words
    Pow = 9,
    /// a == b, as 1 or 0 in the lowest limb
    Eq = 10,
    /// a == 0, as 1 or 0 in the lowest limb
    IsZero = 11,
}

impl FieldOp {
    /// Every operation, for tests that loop over them.
    pub const ALL: [FieldOp; 12] = [
        FieldOp::Add,
        FieldOp::Sub,
        FieldOp::Neg,
        FieldOp::Dbl,
        FieldOp::Mul,
        FieldOp::Sqr,
        FieldOp::Inv,
        FieldOp::ToMont,
        FieldOp::FromMont,
        FieldOp::Pow,
        FieldOp::Eq,
        FieldOp::IsZero,
    ];
}

/// Curve operations of `curve_tests` (op codes of `kernels/curve/tests.cu`). Inputs: `a`, `b`
/// projective (Jacobian), `c` affine; the result is projective.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum CurveOp {
    /// XYZZ(a) += c (mixed addition)
    XyzzAddAffine = 0,
    /// XYZZ(a) += XYZZ(b)
    XyzzAdd = 1,
    /// 2·XYZZ(a)
    XyzzDbl = 2,
    /// −XYZZ(a)
    XyzzNeg = 3,
    /// −c (affine)
    AffineNeg = 4,
    /// a + b (Jacobian)
    JacobianAdd = 5,
    /// 2a (Jacobian)
    JacobianDbl = 6,
    /// −a (Jacobian)
    JacobianNeg = 7,
    /// c → XYZZ → Jacobian
    AffineToXyzz = 8,
    /// XYZZ(a) += c twice in a row: a + 2c
    XyzzAddAffineTwice = 9,
}

impl CurveOp {
    /// Every operation, for tests that loop over them.
    pub const ALL: [CurveOp; 10] = [
        CurveOp::XyzzAddAffine,
        CurveOp::XyzzAdd,
        CurveOp::XyzzDbl,
        CurveOp::XyzzNeg,
        CurveOp::AffineNeg,
        CurveOp::JacobianAdd,
        CurveOp::JacobianDbl,
        CurveOp::JacobianNeg,
        CurveOp::AffineToXyzz,
        CurveOp::XyzzAddAffineTwice,
    ];
}

/// Threads per block of the test kernels: small, since the G2 kernels use ~230 registers.
const BLOCK: u32 = 128;

fn grid(n: u32) -> LaunchConfig {
    LaunchConfig { grid_dim: (n.div_ceil(BLOCK), 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: 0 }
}

fn len_u32(what: &str, n: usize) -> Result<u32> {
    u32::try_from(n).map_err(|_| CudaError::InvalidArgument(format!("{what}: {n} elements > u32::MAX")))
}

fn upload<T: DeviceLayout>(stream: &Arc<CudaStream>, values: &[T]) -> Result<CudaSlice<u64>> {
    stream.clone_htod(T::as_u64s(values)).ctx("cuMemcpyHtoDAsync")
}

fn download<T: DeviceLayout>(stream: &Arc<CudaStream>, buf: &CudaSlice<u64>) -> Result<Vec<T>> {
    let words = stream.clone_dtoh(buf).ctx("cuMemcpyDtoH")?;
    T::from_u64s(&words).map_err(|e| CudaError::InvalidArgument(e.to_string()))
}

fn field_op<T: DeviceLayout>(device: &Device, kernel: Kernel, op: FieldOp, a: &[T], b: &[T]) -> Result<Vec<T>> {
    if a.len() != b.len() {
        return Err(CudaError::InvalidArgument(format!(
            "{}: lengths differ (a {}, b {}): pass slices of equal length",
            kernel.name,
            a.len(),
            b.len()
        )));
    }
    let n = len_u32(kernel.name, a.len())?;
    if n == 0 {
        return Ok(Vec::new());
    }
    let f = device.kernel(kernel)?;
    let stream = device.new_stream()?;
    let a_d = upload(&stream, a)?;
    let b_d = upload(&stream, b)?;
    let mut out = alloc_poisoned::<u64>(&stream, a.len() * T::WORDS)?;
    let op_code = op as u32;
    let mut launch = stream.launch_builder(&f);
    launch.arg(&a_d).arg(&b_d).arg(&mut out).arg(&n).arg(&op_code);
    // SAFETY: matches `<kernel>(const T*, const T*, T*, uint32_t n, uint32_t op)` of
    // kernels/field/tests.cu; each buffer holds n values of T's layout (T::WORDS words each)
    // and the kernel bounds-checks i < n.
    unsafe { launch.launch(grid(n)) }.ctx("cuLaunchKernel(field_tests)")?;
    check_stream(&stream)?;
    download(&stream, &out)
}

/// `op(a[i], b[i])` for Fr on the device (kernel `fr_op`).
pub fn fr_op(device: &Device, op: FieldOp, a: &[Scalar], b: &[Scalar]) -> Result<Vec<Scalar>> {
    field_op(device, tests::FR_OP, op, a, b)
}

/// `op(a[i], b[i])` for Fp on the device (kernel `fp_op`).
pub fn fp_op(device: &Device, op: FieldOp, a: &[Fp], b: &[Fp]) -> Result<Vec<Fp>> {
    field_op(device, tests::FP_OP, op, a, b)
}

/// `op(a[i], b[i])` for Fp2 on the device (kernel `fp2_op`); [`FieldOp::Pow`] uses the
/// lowest limb of `b[i].c0`, [`FieldOp::Eq`]/[`FieldOp::IsZero`] answer in `c0`'s lowest limb.
pub fn fp2_op(device: &Device, op: FieldOp, a: &[Fp2], b: &[Fp2]) -> Result<Vec<Fp2>> {
    field_op(device, tests::FP2_OP, op, a, b)
}

/// The constants as the kernels see them (kernel `field_constants`):
/// Fr `[zero, one, root, root_inv, generator, generator_inv, FR_ONE, FR_R2, FR_MODULUS]`,
/// Fp `[zero, one, FP_ONE, FP_R2, FP_MODULUS]` (the last two of each are raw integers, read
/// as internal words).
pub fn field_constants(device: &Device) -> Result<(Vec<Scalar>, Vec<Fp>)> {
    let f = device.kernel(tests::CONSTANTS)?;
    let stream = device.new_stream()?;
    let mut fr_out = alloc_poisoned::<u64>(&stream, 9 * Scalar::WORDS)?;
    let mut fp_out = alloc_poisoned::<u64>(&stream, 5 * Fp::WORDS)?;
    let mut launch = stream.launch_builder(&f);
    launch.arg(&mut fr_out).arg(&mut fp_out);
    // SAFETY: matches `field_constants(fr_t*, fp_t*)`; the buffers hold 9 fr_t and 5 fp_t,
    // exactly what its single thread writes.
    unsafe { launch.launch(LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1, 1, 1), shared_mem_bytes: 0 }) }
        .ctx("cuLaunchKernel(field_constants)")?;
    check_stream(&stream)?;
    Ok((download(&stream, &fr_out)?, download(&stream, &fp_out)?))
}

fn curve_op<P: DeviceLayout, A: DeviceLayout>(
    device: &Device,
    kernel: Kernel,
    op: CurveOp,
    a: &[P],
    b: &[P],
    c: &[A],
) -> Result<Vec<P>> {
    if a.len() != b.len() || a.len() != c.len() {
        return Err(CudaError::InvalidArgument(format!(
            "{}: lengths differ (a {}, b {}, c {}): pass slices of equal length",
            kernel.name,
            a.len(),
            b.len(),
            c.len()
        )));
    }
    let n = len_u32(kernel.name, a.len())?;
    if n == 0 {
        return Ok(Vec::new());
    }
    let f = device.kernel(kernel)?;
    let stream = device.new_stream()?;
    let a_d = upload(&stream, a)?;
    let b_d = upload(&stream, b)?;
    let c_d = upload(&stream, c)?;
    let mut out = alloc_poisoned::<u64>(&stream, a.len() * P::WORDS)?;
    let op_code = op as u32;
    let mut launch = stream.launch_builder(&f);
    launch.arg(&a_d).arg(&b_d).arg(&c_d).arg(&mut out).arg(&n).arg(&op_code);
    // SAFETY: matches `<kernel>(const jacobian*, const jacobian*, const affine*, jacobian*,
    // uint32_t n, uint32_t op)` of kernels/curve/tests.cu; every buffer holds n values of
    // its layout and the kernel bounds-checks i < n.
    unsafe { launch.launch(grid(n)) }.ctx("cuLaunchKernel(curve_tests)")?;
    check_stream(&stream)?;
    download(&stream, &out)
}

/// `op(a[i], b[i], c[i])` in G1 on the device (kernel `g1_op`).
pub fn g1_op(
    device: &Device,
    op: CurveOp,
    a: &[G1Projective],
    b: &[G1Projective],
    c: &[G1Affine],
) -> Result<Vec<G1Projective>> {
    curve_op(device, curve_tests::G1_OP, op, a, b, c)
}

/// `op(a[i], b[i], c[i])` in G2 on the device (kernel `g2_op`).
pub fn g2_op(
    device: &Device,
    op: CurveOp,
    a: &[G2Projective],
    b: &[G2Projective],
    c: &[G2Affine],
) -> Result<Vec<G2Projective>> {
    curve_op(device, curve_tests::G2_OP, op, a, b, c)
}

fn batch_to_affine<P: DeviceLayout, A: DeviceLayout>(
    device: &Device,
    kernel: Kernel,
    field_words: usize,
    points: &[P],
    chunk: u32,
    via_xyzz: bool,
) -> Result<Vec<A>> {
    let n = len_u32(kernel.name, points.len())?;
    if chunk == 0 {
        return Err(CudaError::InvalidArgument(format!("{}: chunk must be at least 1", kernel.name)));
    }
    if n == 0 {
        return Ok(Vec::new());
    }
    let f = device.kernel(kernel)?;
    let stream = device.new_stream()?;
    let in_d = upload(&stream, points)?;
    let mut out = alloc_poisoned::<u64>(&stream, points.len() * A::WORDS)?;
    // XYZZ points are 4 field elements; the scratch holds one field element per point.
    let mut tmp = alloc_poisoned::<u64>(&stream, points.len() * 4 * field_words)?;
    let mut scratch = alloc_poisoned::<u64>(&stream, points.len() * field_words)?;
    let threads = n.div_ceil(chunk);
    let via = u32::from(via_xyzz);
    let mut launch = stream.launch_builder(&f);
    launch.arg(&in_d).arg(&mut out).arg(&mut tmp).arg(&mut scratch).arg(&n).arg(&chunk).arg(&via);
    // SAFETY: matches `<kernel>(const jacobian*, affine*, xyzz*, field*, uint32_t n,
    // uint32_t chunk, uint32_t via_xyzz)`; in/out/tmp/scratch hold n points / affine points /
    // XYZZ points / field elements, and each thread only touches [t*chunk, min(n, (t+1)*chunk)).
    unsafe { launch.launch(grid(threads)) }.ctx("cuLaunchKernel(batch_to_affine)")?;
    check_stream(&stream)?;
    download(&stream, &out)
}

/// G1 points to affine on the device with Montgomery batch inversion, `chunk` points per
/// thread; `via_xyzz` goes through XYZZ coordinates (the MSM bucket form) first.
pub fn g1_batch_to_affine(
    device: &Device,
    points: &[G1Projective],
    chunk: u32,
    via_xyzz: bool,
) -> Result<Vec<G1Affine>> {
    batch_to_affine(device, curve_tests::G1_BATCH_TO_AFFINE, Fp::WORDS, points, chunk, via_xyzz)
}

/// G2 points to affine on the device, like [`g1_batch_to_affine`].
pub fn g2_batch_to_affine(
    device: &Device,
    points: &[G2Projective],
    chunk: u32,
    via_xyzz: bool,
) -> Result<Vec<G2Affine>> {
    batch_to_affine(device, curve_tests::G2_BATCH_TO_AFFINE, Fp2::WORDS, points, chunk, via_xyzz)
}

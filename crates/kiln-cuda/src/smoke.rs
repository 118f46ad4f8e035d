//! The smoke kernel: the whole chain (nvcc → embedded fatbin → module load → launch →
//! result on the host) in the fewest lines. Also the template for every kernel wrapper.

use cudarc::driver::{LaunchConfig, PushKernelArg};

use crate::{CudaError, CudaResultExt, Device, Result, alloc_poisoned, check_stream};

/// `a[i] * b[i] + c[i]` (wrapping, mod 2^64) computed on `device`.
pub fn mul_add_u64(device: &Device, a: &[u64], b: &[u64], c: &[u64]) -> Result<Vec<u64>> {
    let n = a.len();
    if b.len() != n || c.len() != n {
        return Err(CudaError::InvalidArgument(format!(
            "mul_add_u64: lengths differ (a {n}, b {}, c {})",
            b.len(),
            c.len()
        )));
    }
    let n32 = u32::try_from(n).map_err(|_| CudaError::InvalidArgument(format!("mul_add_u64: {n} > u32::MAX")))?;
    if n == 0 {
        return Ok(Vec::new());
    }
    let f = device.kernel(kiln_kernels::smoke::MUL_ADD_U64)?;
    let stream = device.new_stream()?;
    let a_d = stream.clone_htod(a).ctx("cuMemcpyHtoDAsync")?;
    let b_d = stream.clone_htod(b).ctx("cuMemcpyHtoDAsync")?;
    let c_d = stream.clone_htod(c).ctx("cuMemcpyHtoDAsync")?;
    let mut out = alloc_poisoned::<u64>(&stream, n)?;
    let mut launch = stream.launch_builder(&f);
    launch.arg(&a_d).arg(&b_d).arg(&c_d).arg(&mut out).arg(&n32);
    // SAFETY: the argument list matches `smoke_mul_add_u64(const u64*, const u64*,
    // const u64*, u64*, u32)`, every buffer holds `n` elements and the kernel bounds-checks `i < n`.
    unsafe { launch.launch(LaunchConfig::for_num_elems(n32)) }.ctx("cuLaunchKernel(smoke_mul_add_u64)")?;
    check_stream(&stream)?;
    stream.clone_dtoh(&out).ctx("cuMemcpyDtoH")
}

#[cfg(test)]
mod tests {
    use rand::Rng;

    use crate::testing::gpu_or_skip;

    #[test]
    #[ignore = "needs a CUDA GPU: cargo xtask gpu-bundle"]
    fn smoke_kernel_matches_host() {
        let Some(device) = gpu_or_skip("smoke_kernel_matches_host") else { return };
        let mut rng = rand::thread_rng();
        for n in [1usize, 255, 256, 257, 100_003] {
            let a: Vec<u64> = (0..n).map(|_| rng.r#gen()).collect();
            let b: Vec<u64> = (0..n).map(|_| rng.r#gen()).collect();
            let c: Vec<u64> = (0..n).map(|_| rng.r#gen()).collect();
            let got = super::mul_add_u64(&device, &a, &b, &c).unwrap();
            let want: Vec<u64> = (0..n).map(|i| a[i].wrapping_mul(b[i]).wrapping_add(c[i])).collect();
            assert_eq!(got, want, "n = {n}");
        }
    }

    #[test]
    #[ignore = "needs a CUDA GPU: cargo xtask gpu-bundle"]
    fn smoke_rejects_mismatched_lengths() {
        let Some(device) = gpu_or_skip("smoke_rejects_mismatched_lengths") else { return };
        let err = super::mul_add_u64(&device, &[1, 2], &[3], &[4, 5]).unwrap_err();
        assert!(err.to_string().contains("lengths differ"), "{err}");
    }
}

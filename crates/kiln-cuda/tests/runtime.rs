//! Device-runtime tests: discovery without a GPU never panics; with one, properties,
//! streams, buffers, pinned memory and timing work.

use cudarc::driver::{CudaSlice, DevicePtr};
use kiln_cuda::testing::{gpu_or_skip, gpu_required};
use kiln_cuda::{CudaError, CudaResultExt, Device};

#[test]
fn discovery_never_panics() {
    // On a machine without a driver or device this returns a value; with one, a list.
    match kiln_cuda::devices() {
        Ok(list) => {
            assert!(!list.is_empty());
            for d in &list {
                assert!(d.total_bytes > 0 && d.free_bytes <= d.total_bytes, "{d:?}");
                assert!(d.sm_count > 0 && d.major >= 3, "{d:?}");
            }
        }
        Err(CudaError::NoDriver | CudaError::NoDevice { .. }) => {
            assert!(!gpu_required(), "KILN_REQUIRE_GPU=1 but no GPU found");
        }
        Err(e) => panic!("unexpected discovery error: {e}"),
    }
}

#[test]
fn opening_a_missing_ordinal_is_an_error() {
    match Device::open(4096) {
        Err(CudaError::NoDriver) | Err(CudaError::NoDevice { ordinal: Some(4096), .. }) => {}
        other => panic!("expected NoDriver or NoDevice, got {other:?}"),
    }
}

#[test]
#[ignore = "needs a CUDA GPU: cargo xtask gpu-bundle"]
fn device_properties_and_memory() {
    let Some(device) = gpu_or_skip("device_properties_and_memory") else { return };
    let info = device.info().unwrap();
    eprintln!("{info:?}");
    assert!(info.kernels_supported);
    let stream = device.new_stream().unwrap();
    let n = 1 << 20;
    let buf: CudaSlice<u32> = kiln_cuda::alloc_poisoned(&stream, n).unwrap();
    let back = stream.clone_dtoh(&buf).ctx("dtoh").unwrap();
    assert!(back.iter().all(|&x| x == 0xA5A5_A5A5));
    let host: Vec<u32> = (0..n as u32).collect();
    let d = stream.clone_htod(&host).unwrap();
    assert_eq!(stream.clone_dtoh(&d).unwrap(), host);
    {
        let (ptr, _record) = d.device_ptr(&stream);
        assert_ne!(ptr, 0);
    }
    let (free, total) = device.mem_info().unwrap();
    assert!(free <= total && free + (n * 8) <= total);
}

#[test]
#[ignore = "needs a CUDA GPU: cargo xtask gpu-bundle"]
fn pinned_upload_and_event_timing() {
    let Some(device) = gpu_or_skip("pinned_upload_and_event_timing") else { return };
    let stream = device.new_stream().unwrap();
    let n = 1 << 22;
    let mut pinned = kiln_cuda::alloc_pinned::<u64>(&device, n, false).unwrap();
    for (i, x) in pinned.as_mut_slice().unwrap().iter_mut().enumerate() {
        *x = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    let timer = kiln_cuda::StreamTimer::start(&stream).unwrap();
    let d = stream.clone_htod(&pinned).unwrap();
    let ms = timer.stop_ms().unwrap();
    assert!(ms >= 0.0);
    eprintln!("pinned upload of {} MiB: {ms:.3} ms ({:.1} GB/s)", (n * 8) >> 20, (n * 8) as f64 / ms as f64 / 1e6);
    let back = stream.clone_dtoh(&d).unwrap();
    assert_eq!(back.as_slice(), pinned.as_slice().unwrap());
    // Zero elements: an error, not cudarc's assertion on the driver's null pointer.
    let err = kiln_cuda::alloc_pinned::<u64>(&device, 0, false).unwrap_err();
    assert!(err.to_string().contains("zero elements"), "{err}");
}

#[test]
#[ignore = "needs a CUDA GPU: cargo xtask gpu-bundle"]
fn missing_kernel_is_a_typed_error() {
    let Some(device) = gpu_or_skip("missing_kernel_is_a_typed_error") else { return };
    assert!(matches!(
        device.function(kiln_kernels::smoke::MODULE, "no_such_kernel"),
        Err(CudaError::MissingKernel { .. })
    ));
    assert!(matches!(device.function("no_such_module", "x"), Err(CudaError::MissingKernel { .. })));
    // Same module twice: loaded once, same handle.
    let a = device.module(kiln_kernels::smoke::MODULE).unwrap();
    let b = device.module(kiln_kernels::smoke::MODULE).unwrap();
    assert!(std::sync::Arc::ptr_eq(&a, &b));
}

#[test]
#[ignore = "needs a CUDA GPU: cargo xtask gpu-bundle"]
fn out_of_memory_is_a_typed_error() {
    let Some(device) = gpu_or_skip("out_of_memory_is_a_typed_error") else { return };
    let (_, total) = device.mem_info().unwrap();
    let stream = device.new_stream().unwrap();
    // Twice the card: must fail with OUT_OF_MEMORY, not crash.
    // SAFETY: never read; the allocation is expected to fail.
    let r = unsafe { stream.alloc::<u8>(total * 2) }.ctx("cuMemAllocAsync");
    let err = r.and_then(|b| stream.synchronize().ctx("sync").map(|_| b)).map(|_| ()).unwrap_err();
    assert!(err.is_out_of_memory(), "{err}");
    assert!(err.to_string().contains("out of memory"), "{err}");
}

//! `kiln devices`: what GPUs there are and whether this build's kernels run on them.

use kiln_cuda::{CudaError, DeviceInfo};

/// Options of `kiln devices`.
#[derive(clap::Args)]
pub struct Args {
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

const GIB: f64 = (1u64 << 30) as f64;

/// Prints the device list. No driver or no device is a sentence and a success: the CPU
/// path still works.
pub fn run(args: &Args) -> Result<(), CudaError> {
    let found = kiln_cuda::devices();
    if args.json {
        println!("{}", to_json(&found));
        return match found {
            Ok(_) | Err(CudaError::NoDriver | CudaError::NoDevice { .. }) => Ok(()),
            Err(e) => Err(e),
        };
    }
    let list = match found {
        Ok(list) => list,
        Err(CudaError::NoDriver) => {
            println!("No CUDA driver on this machine (libcuda not found): kiln will prove on the CPU.");
            return Ok(());
        }
        Err(CudaError::NoDevice { .. }) => {
            println!("The CUDA driver is installed but reports no GPU: kiln will prove on the CPU.");
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    if !kiln_kernels::BUILT {
        println!("note: {}", kiln_kernels::NOT_BUILT_HINT);
    }
    println!("{:<3} {:<28} {:>6} {:>5} {:>21}  kernels", "#", "name", "cc", "SMs", "free / total GiB");
    for d in &list {
        println!(
            "{:<3} {:<28} {:>6} {:>5} {:>9.1} / {:>9.1}  {}",
            d.ordinal,
            d.name,
            format!("{}.{}", d.major, d.minor),
            d.sm_count,
            d.free_bytes as f64 / GIB,
            d.total_bytes as f64 / GIB,
            kernel_note(d)
        );
    }
    Ok(())
}

fn kernel_note(d: &DeviceInfo) -> String {
    let cc = d.major * 10 + d.minor;
    if !kiln_kernels::BUILT {
        "not built".into()
    } else if kiln_kernels::ARCHS.contains(&cc) {
        format!("yes (sm_{cc})")
    } else if d.kernels_supported {
        "yes (PTX, JIT at first load)".into()
    } else {
        format!("no: rebuild with KILN_CUDA_ARCHS={cc}")
    }
}

fn to_json(found: &Result<Vec<DeviceInfo>, CudaError>) -> String {
    let escape = |s: &str| s.replace('\\', "\\\\").replace('"', "\\\"");
    match found {
        Ok(list) => {
            let items: Vec<String> = list
                .iter()
                .map(|d| {
                    format!(
                        r#"{{"ordinal":{},"name":"{}","compute_capability":"{}.{}","sm_count":{},"free_bytes":{},"total_bytes":{},"kernels_supported":{}}}"#,
                        d.ordinal,
                        escape(&d.name),
                        d.major,
                        d.minor,
                        d.sm_count,
                        d.free_bytes,
                        d.total_bytes,
                        d.kernels_supported
                    )
                })
                .collect();
            format!(r#"{{"kernels_built":{},"devices":[{}]}}"#, kiln_kernels::BUILT, items.join(","))
        }
        Err(e) => {
            format!(r#"{{"kernels_built":{},"devices":[],"error":"{}"}}"#, kiln_kernels::BUILT, escape(&e.to_string()))
        }
    }
}

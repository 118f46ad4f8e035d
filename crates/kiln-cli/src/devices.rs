//! `kiln devices`: what GPUs there are and whether this build's kernels run on them.

use kiln_cuda::{CudaError, DeviceInfo};
use serde_json::json;

/// Options of `kiln devices`.
#[derive(clap::Args)]
pub struct Args {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

const GIB: f64 = (1u64 << 30) as f64;

/// Prints the device list. No driver or no device is a sentence and a success: the CPU
/// path still works.
pub fn run(args: &Args) -> Result<(), CudaError> {
    let found = kiln_cuda::devices();
    if args.json {
        return match found {
            Ok(_) | Err(CudaError::NoDriver | CudaError::NoDevice { .. }) => {
                println!("{}", to_json(&found));
                Ok(())
            }
            // Printed by main as the one `{"error", "kind"}` object of a failed command.
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

fn to_json(found: &Result<Vec<DeviceInfo>, CudaError>) -> serde_json::Value {
    match found {
        Ok(list) => {
            let devices: Vec<serde_json::Value> = list
                .iter()
                .map(|d| {
                    json!({
                        "ordinal": d.ordinal,
                        "name": d.name,
                        "compute_capability": format!("{}.{}", d.major, d.minor),
                        "sm_count": d.sm_count,
                        "free_bytes": d.free_bytes,
                        "total_bytes": d.total_bytes,
                        "kernels_supported": d.kernels_supported,
                    })
                })
                .collect();
            json!({ "kernels_built": kiln_kernels::BUILT, "devices": devices })
        }
        Err(e) => json!({ "kernels_built": kiln_kernels::BUILT, "devices": [], "error": e.to_string() }),
    }
}

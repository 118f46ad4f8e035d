//! Generates the gRPC glue (client and server) of the `kiln.v1.Proving` service from the
//! description below, with tonic's manual builder: the messages are hand-written prost structs
//! in `src/proto.rs`, so neither a `.proto` file nor `protoc` is needed to build.

use tonic_build::manual::{Builder, Method, Service};

/// (Rust method name, route name, request type, reply type, doc comment).
const METHODS: [(&str, &str, &str, &str, &str); 7] = [
    (
        "submit_proof",
        "SubmitProof",
        "SubmitRequest",
        "SubmitReply",
        "Accepts a job (persisted before the reply) or refuses it with a typed status.",
    ),
    (
        "await_proof",
        "AwaitProof",
        "AwaitRequest",
        "JobStatus",
        "The job's status once it has finished, or when the wait's timeout passes.",
    ),
    ("get_status", "GetStatus", "JobRef", "JobStatus", "The job's status now."),
    ("cancel_proof", "CancelProof", "JobRef", "CancelReply", "Cancels a queued job; a job being proved finishes."),
    (
        "get_metrics",
        "GetMetrics",
        "MetricsRequest",
        "MetricsReply",
        "Prometheus text: jobs by state and priority, queue depth, proof latency.",
    ),
    (
        "preload_params",
        "PreloadParams",
        "ParamsRef",
        "ParamsReply",
        "Loads a parameter set now (else it is loaded on first use).",
    ),
    (
        "evict_params",
        "EvictParams",
        "ParamsRef",
        "ParamsReply",
        "Drops a loaded parameter set (jobs being proved keep their copy).",
    ),
];

fn main() {
    let mut service = Service::builder().name("Proving").package("kiln.v1").comment("kiln's proving service.");
    for (name, route, input, output, comment) in METHODS {
        service = service.method(
            Method::builder()
                .name(name)
                .route_name(route)
                .input_type(format!("crate::proto::{input}"))
                .output_type(format!("crate::proto::{output}"))
                .codec_path("tonic_prost::ProstCodec")
                .comment(comment)
                .build(),
        );
    }
    Builder::new().compile(&[service.build()]);
}

//! VRAM budget: resident SRS, per-worker arenas, the plan that picks the fallback path.

//! Lock policy for workers sharing a GPU, and the device model it is tested against.

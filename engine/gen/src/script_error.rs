//! The error every script family reports ([`tbsim_core::script_error`], shared
//! with the family-script host). Its own module so the host
//! ([`crate::script_host`]) and its child process ([`crate::script_child`]) share
//! it without importing each other.

pub use tbsim_core::script_error::{ERROR_CODE, ScriptError};

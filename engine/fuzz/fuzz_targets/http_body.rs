//! Request bodies (and a chosen route, method and header faults) sent through the
//! HTTP server's router: the session API, the console and MCP.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    tbsim_serve::fuzz::http_body(data);
});

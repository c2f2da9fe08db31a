//! The seccomp filter bubblewrap loads before it starts the interpreter: it
//! refuses every socket family but `AF_UNIX`. The network namespace already
//! leaves only loopback for IP, but families such as `AF_VSOCK` (the host
//! of a virtual machine), `AF_NETLINK` or `AF_BLUETOOTH` are not namespaced.
//!
//! A classic BPF program, assembled here by hand (no libseccomp): check the
//! architecture (a foreign one, e.g. the 32-bit ABI of an x86_64 kernel whose
//! `socketcall` hides its arguments behind a pointer, kills the process),
//! then `socket` and `socketpair` pass only with `AF_UNIX` as their first
//! argument, and `io_uring_*` are refused because `IORING_OP_SOCKET` creates
//! sockets without a `socket` system call.

/// One `struct sock_filter`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Insn {
    pub(super) code: u16,
    pub(super) jt: u8,
    pub(super) jf: u8,
    pub(super) k: u32,
}

// Opcodes (linux/bpf_common.h).
pub(super) const LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
pub(super) const JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
pub(super) const JGE_K: u16 = 0x35; // BPF_JMP | BPF_JGE | BPF_K
pub(super) const RET_K: u16 = 0x06; // BPF_RET | BPF_K

// Return values (linux/seccomp.h).
pub(super) const RET_KILL_PROCESS: u32 = 0x8000_0000;
pub(super) const RET_ERRNO: u32 = 0x0005_0000;
pub(super) const RET_ALLOW: u32 = 0x7fff_0000;

// Offsets in `struct seccomp_data`: nr, arch, instruction_pointer, args[6].
const OFFSET_NR: u32 = 0;
const OFFSET_ARCH: u32 = 4;
/// The low 32 bits of args[0] (little-endian), all of an `int` domain.
const OFFSET_ARG0_LOW: u32 = 16;

const AF_UNIX: u32 = 1;
const EAFNOSUPPORT: u32 = 97;
const ENOSYS: u32 = 38;

/// The architecture this binary runs on, and its system call numbers.
pub(super) struct Arch {
    pub(super) audit: u32,
    pub(super) socket: u32,
    pub(super) socketpair: u32,
    /// System call numbers at or above this are another ABI (x86_64's x32).
    pub(super) foreign_from: Option<u32>,
}

/// io_uring_setup, io_uring_enter, io_uring_register: the same numbers on
/// every architecture that has them.
pub(super) const IO_URING: [u32; 3] = [425, 426, 427];

#[cfg(target_arch = "x86_64")]
pub(super) const NATIVE: Option<Arch> = Some(Arch {
    audit: 0xC000_003E,
    socket: 41,
    socketpair: 53,
    foreign_from: Some(0x4000_0000),
});

#[cfg(target_arch = "aarch64")]
pub(super) const NATIVE: Option<Arch> = Some(Arch {
    audit: 0xC000_00B7,
    socket: 198,
    socketpair: 199,
    foreign_from: None,
});

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub(super) const NATIVE: Option<Arch> = None;

fn stmt(code: u16, k: u32) -> Insn {
    Insn {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

/// The filter for `arch`.
pub(super) fn program(arch: &Arch) -> Vec<Insn> {
    // Three shared exits at the end, jumped to by their distance.
    let mut checks: Vec<(u16, u32, Exit)> = Vec::new();
    if let Some(first) = arch.foreign_from {
        checks.push((JGE_K, first, Exit::Kill));
    }
    checks.push((JEQ_K, arch.socket, Exit::CheckFamily));
    checks.push((JEQ_K, arch.socketpair, Exit::CheckFamily));
    for nr in IO_URING {
        checks.push((JEQ_K, nr, Exit::NoSys));
    }
    let mut insns = vec![
        stmt(LD_W_ABS, OFFSET_ARCH),
        Insn {
            code: JEQ_K,
            jt: 1,
            jf: 0,
            k: arch.audit,
        },
        stmt(RET_K, RET_KILL_PROCESS),
        stmt(LD_W_ABS, OFFSET_NR),
    ];
    // After the checks: ALLOW, then the family check (3 insns), NOSYS, KILL.
    let n = checks.len();
    for (i, (code, k, exit)) in checks.into_iter().enumerate() {
        // Instructions between this check and the first after the checks.
        let rest = n - i - 1;
        let target = rest
            + match exit {
                Exit::CheckFamily => 1,
                Exit::NoSys => 5,
                Exit::Kill => 6,
            };
        insns.push(Insn {
            code,
            jt: u8::try_from(target).unwrap_or(u8::MAX),
            jf: 0,
            k,
        });
    }
    insns.extend([
        stmt(RET_K, RET_ALLOW),
        // CheckFamily:
        stmt(LD_W_ABS, OFFSET_ARG0_LOW),
        Insn {
            code: JEQ_K,
            jt: 0,
            jf: 1,
            k: AF_UNIX,
        },
        stmt(RET_K, RET_ALLOW),
        stmt(RET_K, RET_ERRNO | EAFNOSUPPORT),
        // NoSys:
        stmt(RET_K, RET_ERRNO | ENOSYS),
        // Kill:
        stmt(RET_K, RET_KILL_PROCESS),
    ]);
    insns
}

#[derive(Clone, Copy)]
enum Exit {
    CheckFamily,
    NoSys,
    Kill,
}

/// The program as bubblewrap reads it from `--seccomp FD`: an array of
/// `struct sock_filter` in native byte order.
pub(super) fn bytes(insns: &[Insn]) -> Vec<u8> {
    insns
        .iter()
        .flat_map(|insn| {
            let mut out = Vec::with_capacity(8);
            out.extend_from_slice(&insn.code.to_ne_bytes());
            out.push(insn.jt);
            out.push(insn.jf);
            out.extend_from_slice(&insn.k.to_ne_bytes());
            out
        })
        .collect()
}

/// The compiled filter for this architecture, if we have one for it.
pub(super) fn native_filter() -> Option<Vec<u8>> {
    NATIVE.as_ref().map(|arch| bytes(&program(arch)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the program the way the kernel would, for the instructions it
    /// uses; anything else fails the test.
    fn run(insns: &[Insn], arch: u32, nr: u32, arg0: u64) -> u32 {
        let mut data = Vec::new();
        data.extend_from_slice(&nr.to_le_bytes());
        data.extend_from_slice(&arch.to_le_bytes());
        data.extend_from_slice(&0u64.to_le_bytes());
        data.extend_from_slice(&arg0.to_le_bytes());
        let mut acc = 0u32;
        let mut pc = 0usize;
        loop {
            let insn = insns.get(pc).expect("jumped past the end");
            pc += 1;
            match insn.code {
                LD_W_ABS => {
                    let at = insn.k as usize;
                    let word: [u8; 4] = data[at..at + 4].try_into().expect("4 bytes");
                    acc = u32::from_le_bytes(word);
                }
                JEQ_K | JGE_K => {
                    let taken = if insn.code == JEQ_K {
                        acc == insn.k
                    } else {
                        acc >= insn.k
                    };
                    pc += usize::from(if taken { insn.jt } else { insn.jf });
                }
                RET_K => return insn.k,
                other => panic!("unexpected opcode {other:#x}"),
            }
        }
    }

    fn arches() -> Vec<Arch> {
        vec![
            Arch {
                audit: 0xC000_003E,
                socket: 41,
                socketpair: 53,
                foreign_from: Some(0x4000_0000),
            },
            Arch {
                audit: 0xC000_00B7,
                socket: 198,
                socketpair: 199,
                foreign_from: None,
            },
        ]
    }

    #[test]
    fn only_unix_sockets_pass() {
        for arch in arches() {
            let p = program(&arch);
            assert!(p.len() <= 255);
            for nr in [arch.socket, arch.socketpair] {
                assert_eq!(run(&p, arch.audit, nr, 1), RET_ALLOW);
                // AF_UNIX in the low half is all the kernel reads of an int.
                assert_eq!(run(&p, arch.audit, nr, 0xffff_ffff_0000_0001), RET_ALLOW);
                // AF_INET, AF_INET6, AF_NETLINK, AF_PACKET, AF_BLUETOOTH, AF_VSOCK.
                for family in [2u64, 10, 16, 17, 31, 40, 0, 1 << 32] {
                    assert_eq!(
                        run(&p, arch.audit, nr, family),
                        RET_ERRNO | EAFNOSUPPORT,
                        "family {family}"
                    );
                }
            }
            for nr in IO_URING {
                assert_eq!(run(&p, arch.audit, nr, 0), RET_ERRNO | ENOSYS);
            }
            // Ordinary calls (read, write, openat, clone, mmap) are untouched.
            for nr in [0, 1, 56, 57, 222, 257, 435] {
                if nr != arch.socket && nr != arch.socketpair {
                    assert_eq!(run(&p, arch.audit, nr, 2), RET_ALLOW, "nr {nr}");
                }
            }
            // A foreign ABI (i386 on x86_64, arm on aarch64) is killed.
            for other in [0x4000_0003, 0x4000_0028, 0xC000_003E, 0xC000_00B7] {
                if other != arch.audit {
                    assert_eq!(run(&p, other, arch.socket, 1), RET_KILL_PROCESS);
                }
            }
            if let Some(first) = arch.foreign_from {
                assert_eq!(
                    run(&p, arch.audit, first + arch.socket, 2),
                    RET_KILL_PROCESS
                );
                assert_eq!(run(&p, arch.audit, first, 1), RET_KILL_PROCESS);
            }
        }
    }

    #[test]
    fn serialised_as_sock_filter_structs() {
        let insns = [Insn {
            code: 0x15,
            jt: 2,
            jf: 3,
            k: 0x0102_0304,
        }];
        let mut expected = 0x15u16.to_ne_bytes().to_vec();
        expected.extend([2, 3]);
        expected.extend(0x0102_0304u32.to_ne_bytes());
        assert_eq!(bytes(&insns), expected);
        if let Some(filter) = native_filter() {
            assert_eq!(filter.len() % 8, 0);
        }
    }
}

/*
 * The seccomp filter bubblewrap loads before it runs a tool command (`--seccomp FD`): a classic BPF
 * program, written here because no npm package builds one and libseccomp would be a native addon.
 * It refuses, with EPERM, every system call that would give a file the setuid or setgid bit
 * (chmod, open, mknod with mode & 06000), and, unless a toolset asks for them, the creation of user
 * namespaces. Calls whose mode the filter cannot read (openat2's struct, io_uring's queues) are
 * answered ENOSYS, which libc and runtimes take as "use the plain call".
 */

const EPERM = 1;
const ENOSYS = 38;
const SET_ID_BITS = 0o6000;
const CLONE_NEWUSER = 0x1000_0000;
/** x32's system calls on x86_64 carry this bit; none is allowed (the filter's numbers are x86_64's). */
const X32_SYSCALL_BIT = 0x4000_0000;

// BPF opcodes (linux/filter.h) and seccomp return values (linux/seccomp.h).
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const JSET_K = 0x45;
const RET_K = 0x06;
const RET_ALLOW = 0x7fff_0000;
const RET_ERRNO = 0x0005_0000;

/** Offsets in struct seccomp_data: nr, arch, then the six 64-bit arguments (their low halves, little-endian). */
const NR = 0;
const ARCH = 4;
const argLow = (index: number) => 16 + 8 * index;

interface Arch {
  audit: number;
  x32: boolean;
  /** [system call, argument holding the mode] for calls that set a file's mode. */
  modes: [number, number][];
  /** [system call, argument holding clone flags] for calls that can create a user namespace. */
  namespaces: [number, number][];
  /** Calls that carry a mode or flags where the filter cannot read them. */
  unreadable: number[];
  clone3: number;
}

/** fchmodat2 (Linux 6.6) has one number everywhere; older kernels simply never see it. */
const FCHMODAT2 = 452;

const ARCHES: Record<string, Arch> = {
  x64: {
    audit: 0xc000_003e,
    x32: true,
    // open, creat, chmod, fchmod, mknod, openat, mknodat, fchmodat, fchmodat2
    modes: [
      [2, 2],
      [85, 1],
      [90, 1],
      [91, 1],
      [133, 1],
      [257, 3],
      [259, 2],
      [268, 2],
      [FCHMODAT2, 2],
    ],
    namespaces: [
      [56, 0],
      [272, 0],
    ], // clone, unshare
    unreadable: [437, 425], // openat2, io_uring_setup
    clone3: 435,
  },
  arm64: {
    audit: 0xc000_00b7,
    x32: false,
    // mknodat, fchmod, fchmodat, openat, fchmodat2
    modes: [
      [33, 2],
      [52, 1],
      [53, 2],
      [56, 3],
      [FCHMODAT2, 2],
    ],
    namespaces: [
      [220, 0],
      [97, 0],
    ], // clone, unshare
    unreadable: [437, 425],
    clone3: 435,
  },
};

type Instruction = [code: number, jt: number, jf: number, k: number];

/** Refuse `syscall` with `errno` when its argument has any of `bits`; otherwise fall through. */
function refuseBits(syscall: number, argument: number, bits: number, errno: number): Instruction[] {
  return [
    [LD_W_ABS, 0, 0, NR],
    [JEQ_K, 0, 3, syscall],
    [LD_W_ABS, 0, 0, argLow(argument)],
    [JSET_K, 0, 1, bits],
    [RET_K, 0, 0, RET_ERRNO | errno],
  ];
}

function refuseCall(syscall: number, errno: number): Instruction[] {
  return [
    [LD_W_ABS, 0, 0, NR],
    [JEQ_K, 0, 1, syscall],
    [RET_K, 0, 0, RET_ERRNO | errno],
  ];
}

export interface SeccompOptions {
  /** Let the command create user namespaces (a toolset in HERALD_SANDBOX_USERNS). */
  userNamespaces: boolean;
}

/** The rules as instructions, for one architecture. */
function program(arch: Arch, options: SeccompOptions): Instruction[] {
  const rules: Instruction[] = [
    ...arch.modes.flatMap(([syscall, argument]) => refuseBits(syscall, argument, SET_ID_BITS, EPERM)),
    ...arch.unreadable.flatMap((syscall) => refuseCall(syscall, ENOSYS)),
  ];
  if (!options.userNamespaces) {
    rules.push(...arch.namespaces.flatMap(([syscall, argument]) => refuseBits(syscall, argument, CLONE_NEWUSER, EPERM)));
    // clone3 passes its flags in a struct; glibc falls back to clone on ENOSYS, where they are read.
    rules.push(...refuseCall(arch.clone3, ENOSYS));
  }
  return [
    // Another architecture's calls (i386 on x86_64) have other numbers: none is allowed.
    [LD_W_ABS, 0, 0, ARCH],
    [JEQ_K, 1, 0, arch.audit],
    [RET_K, 0, 0, RET_ERRNO | EPERM],
    ...(arch.x32
      ? ([
          [LD_W_ABS, 0, 0, NR],
          [JGE_K, 0, 1, X32_SYSCALL_BIT],
          [RET_K, 0, 0, RET_ERRNO | ENOSYS],
        ] as Instruction[])
      : []),
    ...rules,
    [RET_K, 0, 0, RET_ALLOW],
  ];
}

/**
 * The compiled filter (struct sock_filter[], native byte order) for `processArch` (Node's
 * `process.arch`), or null where the filter has no system call table: x64 and arm64 only.
 */
export function seccompFilter(processArch: string, options: SeccompOptions): Buffer | null {
  const arch = ARCHES[processArch];
  if (arch === undefined) return null;
  const instructions = program(arch, options);
  const buffer = Buffer.alloc(instructions.length * 8);
  instructions.forEach(([code, jt, jf, k], index) => {
    buffer.writeUInt16LE(code, index * 8);
    buffer.writeUInt8(jt, index * 8 + 2);
    buffer.writeUInt8(jf, index * 8 + 3);
    buffer.writeUInt32LE(k >>> 0, index * 8 + 4);
  });
  return buffer;
}

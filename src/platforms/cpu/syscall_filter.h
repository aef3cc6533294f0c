// The seccomp filter the CPU harness installs after it has read everything it needs
// (fixtures, the kernel's shared object) and before the kernel's first call.
#pragma once

#include <optional>
#include <string>

namespace kernelevolve::platforms::cpu {

/// Installs a seccomp filter (libseccomp) on the calling process, all threads
/// (SECCOMP_FILTER_FLAG_TSYNC), inherited by every thread created later:
///
/// | system call | action |
/// |---|---|
/// | open, openat, openat2, creat | fail with EACCES; the first path is recorded (FileOpenAttempt) unless it is one of the runtime's own probes (/sys/devices/system/cpu/*, /proc/stat, /proc/cpuinfo, /proc/meminfo, /sys/fs/cgroup/*) |
/// | clone without CLONE_THREAD, fork, vfork | the process writes a rejected_by_check verdict ("tried to spawn a process (clone)") to `verdict_fd` and exits 0 |
/// | execve, execveat | same, "tried to execute a program (execve)" |
/// | socket, socketpair, connect, bind, listen, accept, accept4 | same, "tried to open a socket (socket)" |
/// | setsid, setpgid, ptrace, process_vm_readv/writev, unshare, mount, chroot, seccomp, name_to_handle_at, open_by_handle_at, rt_sigaction of SIGSYS/SIGSEGV/SIGBUS | same, "made a forbidden system call (setsid)" |
/// | clone3 | fails with ENOSYS (glibc then falls back to clone, whose flags can be checked) |
/// | any system call of another architecture (int 0x80 on x86-64) | process killed by SIGSYS |
///
/// Everything else is allowed (threads, memory, time, writes to open descriptors).
/// Returns nullopt when installed, else the reason it could not be (the harness then
/// fails with that reason: it never runs a kernel unfiltered unless told to).
std::optional<std::string> InstallSyscallFilter(int verdict_fd);

/// The first file a kernel tried to open since the filter was installed (the open
/// failed with EACCES), or nullopt. "/path/seed_0.safetensors".
std::optional<std::string> FileOpenAttempt();

}  // namespace kernelevolve::platforms::cpu

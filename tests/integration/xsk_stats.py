"""The drop counters of a running process's AF_XDP sockets, read from outside it.

Usage: xsk_stats.py PREFIX PID...  Prints "PREFIX<counter> N" lines, summed over every AF_XDP
socket of the processes (none when a process has none, or is gone).
       xsk_stats.py --watch OUT PREFIX COMM  Every 0.1 s until killed: the same for the
processes named COMM, the last reading that found a socket written to OUT (a process's
sockets, and their counts, go with it: kxdpgun's are read while it runs).

The kernel counts, per AF_XDP socket (struct xdp_statistics, getsockopt(SOL_XDP,
XDP_STATISTICS)): rx_dropped, rx_invalid_descs, tx_invalid_descs, rx_ring_full (a frame for
the socket found its rx ring full: the process did not read in time), rx_fill_ring_empty_descs
and tx_ring_empty_descs. DPDK's net_af_xdp folds only rx_dropped into imissed, and neither
kxdpgun nor `ss --xdp` (without CONFIG_XDP_SOCKETS_DIAG) shows them, so the test takes a
duplicate of each socket with pidfd_getfd(2) (root, as the tests run) and asks it directly.
"""
import ctypes
import os
import signal
import struct
import sys
import time

SOL_XDP = 283
XDP_STATISTICS = 7
SYS_PIDFD_GETFD = 438  # x86_64 and the generic table alike
NAMES = ("rx_dropped", "rx_invalid_descs", "tx_invalid_descs", "rx_ring_full",
         "rx_fill_ring_empty_descs", "tx_ring_empty_descs")

libc = ctypes.CDLL(None, use_errno=True)


def socket_fds(pid):
    d = f"/proc/{pid}/fd"
    for name in os.listdir(d):
        try:
            if os.readlink(f"{d}/{name}").startswith("socket:"):
                yield int(name)
        except OSError:
            continue


def stats(pid, total):
    """Adds pid's AF_XDP sockets' counters to total; returns how many it has."""
    n = 0
    pidfd = os.pidfd_open(pid)
    try:
        for fd in socket_fds(pid):
            dup = libc.syscall(SYS_PIDFD_GETFD, pidfd, fd, 0)
            if dup < 0:
                continue
            # By libc: Python's socket object refuses an AF_XDP socket (no getsockname).
            buf = ctypes.create_string_buffer(8 * len(NAMES))
            size = ctypes.c_uint32(len(buf))
            rc = libc.getsockopt(dup, SOL_XDP, XDP_STATISTICS, buf, ctypes.byref(size))
            os.close(dup)
            if rc != 0:  # not an AF_XDP socket
                continue
            # A kernel older than 5.9 gives the first three only.
            raw = buf.raw[:size.value // 8 * 8]
            for name, v in zip(NAMES, struct.unpack(f"{len(raw) // 8}Q", raw)):
                total[name] += v
            n += 1
    finally:
        os.close(pidfd)
    return n


def lines(prefix, pids):
    total = dict.fromkeys(NAMES, 0)
    found = 0
    for p in pids:
        try:
            found += stats(int(p), total)
        except (OSError, ValueError):
            continue
    return [f"{prefix}{k} {v}\n" for k, v in total.items()] if found else []


def pids_named(comm):
    for p in os.listdir("/proc"):
        try:
            if p.isdigit() and open(f"/proc/{p}/comm").read().strip() == comm:
                yield p
        except OSError:
            continue


def main():
    if sys.argv[1] == "--watch":
        out, prefix, comm = sys.argv[2:5]
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        while True:
            got = lines(prefix, list(pids_named(comm)))
            if got:
                with open(out + ".tmp", "w") as f:
                    f.writelines(got)
                os.replace(out + ".tmp", out)
            time.sleep(0.1)
    sys.stdout.writelines(lines(sys.argv[1], sys.argv[2:]))


main()

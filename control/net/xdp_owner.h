/*
 * Who left libxdp's default program on an interface: the record a dpdk-mode pop53d keeps.
 *
 * In dpdk mode on net_af_xdp the af_xdp driver has libxdp attach its default program
 * (`xsk_def_prog`, alone or under libxdp's dispatcher `xdp_dispatcher`), which redirects every
 * frame to the AF_XDP socket. The driver detaches it on close, but after SIGKILL or a crash it
 * stays, and any program not pop53's steering one makes pop53d refuse to start (it could be
 * another AF_XDP application's). So that pop53d restarts after its own crash without removing
 * anyone else's program, each dpdk-mode run records the id of the program attached after the
 * port started, and its pid, in a file beside the control socket:
 *
 *     <dirname(server.control_socket)>/xdp-<iface>.owner     "prog <id> pid <pid>\n"
 *
 * and removes it on a clean stop. BPF program ids are allocated cyclically by the kernel and
 * not reused while the id space lasts (2^31), so a program with the recorded id IS the one that
 * run attached. The next run detaches that program only (control/net/xdp.h,
 * p53_xdp_detach_stale) and only when the recorded pid no longer runs a pop53d.
 *
 * Control thread only (file and bpf syscalls). The calling thread must be in the network
 * namespace of the interface.
 */
#ifndef P53_XDP_OWNER_H
#define P53_XDP_OWNER_H

#include <stddef.h>
#include <stdint.h>

/**
 * The record's path for an interface: dirname(control_socket)/xdp-IFNAME.owner.
 * @return 0, or -ENAMETOOLONG when it does not fit in len bytes. Pure string work.
 */
int p53_xdp_owner_path(char *out, size_t len, const char *control_socket, const char *ifname);

/**
 * The program an earlier run recorded and left behind.
 *
 * @param id   set to the recorded program id, 0 when there is no record
 * @param pid  set to the recorded pid (0 without a record)
 * @return 0 (also without a record: *id == 0), -EBUSY when the recorded pid still runs a
 *         process named pop53d (another instance owns the interface: leave its program), or
 *         -EINVAL for a record that does not parse (*id == 0, treated as none by the caller).
 */
int p53_xdp_owner_left(const char *path, uint32_t *id, long *pid);

/**
 * Record the XDP program attached to ifname now (any mode) as this process's: written to a
 * temporary file and renamed over path, so a crash never leaves half a record. The
 * directory is made (0755) when missing, as p53_ctl_listen() does for the control socket.
 * @return 0, -ENOENT when no program is attached, or a negative errno (the message on stderr).
 */
int p53_xdp_owner_write(const char *path, const char *ifname);

/** Remove the record (a clean stop: the driver detached the program). Missing is fine. */
void p53_xdp_owner_remove(const char *path);

#endif /* P53_XDP_OWNER_H */

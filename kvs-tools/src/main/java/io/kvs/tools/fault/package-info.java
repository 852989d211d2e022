/**
 * Faults injected into the processes of a cluster on this machine, for the chaos campaign ({@code
 * ./kvs chaos}): a process's TCP traffic to some ports cut with iptables and a cgroup ({@link
 * io.kvs.tools.fault.NetworkCut}), a directory on a small loop-mounted file system that can be made
 * full ({@link io.kvs.tools.fault.LoopDisk}), garbage bytes and silent connections on ports ({@link
 * io.kvs.tools.fault.PortGarbage}), SIGSTOP and SIGCONT ({@link io.kvs.tools.fault.Signals}); with
 * the helpers they share: a process's sockets from {@code /proc} ({@link
 * io.kvs.tools.fault.ProcessSockets}) and bounded system commands ({@link
 * io.kvs.tools.fault.SystemCommand}). Each fault that changes the host (rules, cgroups, mounts,
 * loop devices) undoes it on {@code close()}. They need root.
 */
package io.kvs.tools.fault;

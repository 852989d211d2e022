/**
 * The region server's end of the control RPC ({@link io.kvs.server.control.ControlServer}):
 * commands from the master, authenticated by the cluster secret and TLS, run in three bounded lanes
 * so that reads ({@code list}, {@code stats}) never wait for an open or a close in progress; a full
 * lane answers {@code OVERLOADED}. What the commands act on is a {@link
 * io.kvs.server.control.ControlledRegions} ({@code regions.HostedRegions} in a server). See
 * docs/PROTOCOL.md "Control RPC" and docs/OPERATIONS.md "Bounds and overload".
 */
package io.kvs.server.control;

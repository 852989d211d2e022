/**
 * Linearizability checking for fault-injection tests and the failover benchmark: clients record
 * every PUT, DELETE, GET and compare-and-set (CAS) they issue with a {@link
 * io.kvs.bench.history.HistoryRecorder} (invoke and completion times, and whether a failed write
 * surely did not take effect or may have; a CAS that answered "not applied" is the read of the
 * value it found), and the {@link io.kvs.bench.history.LinearizabilityChecker} decides whether the
 * recorded {@link io.kvs.bench.history.History} is linearizable per key: no acknowledged write
 * lost, no stale read. A {@link io.kvs.bench.history.Verdict} names the violated keys with the
 * operations that prove it; a history can be saved as JSON lines and checked again offline. The
 * checker is our own: the Wing &amp; Gong search with Lowe's memoisation (as in Porcupine), plus
 * direct rules that rely on every PUT and CAS writing a unique value; its tests include histories
 * known to be wrong.
 */
package io.kvs.bench.history;

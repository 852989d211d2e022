/**
 * {@code ./kvs shell}: an interactive, line-oriented client of a running cluster ({@link
 * io.kvs.bench.shell.Shell}), also scriptable through piped input or {@code -e}.
 */
package io.kvs.bench.shell;

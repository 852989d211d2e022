/**
 * {@code ./kvs shell}: an interactive, line-oriented client of a running cluster ({@link
 * io.kvs.tools.shell.Shell}), also scriptable through piped input or {@code -e}.
 */
package io.kvs.tools.shell;

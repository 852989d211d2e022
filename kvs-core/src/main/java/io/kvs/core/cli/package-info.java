/** Command-line parsing shared by the KVS executables (master, region server, tools). */
package io.kvs.core.cli;

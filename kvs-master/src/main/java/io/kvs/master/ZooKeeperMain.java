package io.kvs.master;

import io.kvs.core.cli.Flags;
import io.kvs.core.cli.Shutdown;
import java.nio.file.Path;
import java.util.Set;

/**
 * A single-node ZooKeeper as its own process, for a local cluster whose masters come and go: {@code
 * ZooKeeperMain --dir DIR [--port 0] [--log-dir DIR]} ({@code --log-dir}: its transaction log
 * elsewhere than its snapshots, on a device of its own). Writes its connect string to {@code
 * DIR/zookeeper.connect}; stops on SIGTERM.
 */
public final class ZooKeeperMain {
  private ZooKeeperMain() {}

  public static void main(String[] args) throws Exception {
    Flags flags = Flags.parse(args, Set.of("dir", "host", "port", "log-dir"));
    Path dir = Path.of(flags.require("dir"));
    EmbeddedZooKeeper zookeeper =
        EmbeddedZooKeeper.start(
            dir,
            flags.get("host", "127.0.0.1"),
            flags.getInt("port", 0),
            flags.has("log-dir") ? Path.of(flags.require("log-dir")) : null);
    zookeeper.publishConnectString(dir.resolve("zookeeper.connect"));
    Shutdown.closeOnStopAndWait("zookeeper", zookeeper);
  }
}

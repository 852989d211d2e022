package io.kvs.core.security;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;

/**
 * ZooKeeper digest ACLs on a cluster's znodes (docs/OPERATIONS.md, "Security"). A process with
 * credentials authenticates its session with them, and every znode it creates below {@code /kvs}
 * (the cluster root {@code /kvs/<cluster>} and everything below it: config, servers, masters,
 * regions, admin, whatever is added later) gets the ACL {@link #clusterAcl}: every permission for
 * that digest identity, read for anyone. {@code /kvs} itself, if it creates it, lets anyone read
 * and create (other clusters, with other credentials, live beside this one) but only the
 * credentials' holders delete or change it. Clients route by reading the region map and the servers
 * without credentials; only holders of the credentials (servers, masters, the admin tool) can
 * create, change or delete. Without credentials nothing changes: znodes are open to anyone.
 *
 * <p>ACLs are set when a znode is created: znodes made before credentials were configured keep
 * their open ACL (start a secured cluster on a fresh namespace, or set them with {@code setAcl}).
 */
public final class ZooKeeperAcls {
  /** The root under which every cluster's znodes live ({@code /kvs/<cluster>}). */
  public static final String KVS_ROOT = "/kvs";

  // ZooKeeper's ZooDefs.Perms and ZooDefs.Ids, spelled out: javac warns reading ZooDefs
  // (annotations
  // this build does not have), and the build treats warnings as errors.
  private static final int READ = 1;
  private static final int CREATE = 4;
  private static final int ALL = 31;
  private static final Id ANYONE = new Id("world", "anyone");
  private static final List<ACL> OPEN = aclList(new ACL(ALL, ANYONE));

  private ZooKeeperAcls() {}

  /**
   * Configures {@code builder} to authenticate with {@code digest} and to create znodes under
   * {@link #KVS_ROOT} with {@link #clusterAcl}; does nothing without a digest.
   *
   * @return {@code builder}
   */
  public static CuratorFrameworkFactory.Builder apply(
      CuratorFrameworkFactory.Builder builder, Optional<ZooKeeperDigest> digest) {
    if (digest.isEmpty()) {
      return builder;
    }
    List<ACL> secured = clusterAcl(digest.get());
    List<ACL> root = rootAcl(digest.get());
    return builder
        .authorization("digest", digest.get().authBytes())
        .aclProvider(
            new ACLProvider() {
              @Override
              public List<ACL> getDefaultAcl() {
                return OPEN;
              }

              @Override
              public List<ACL> getAclForPath(String path) {
                if (path.equals(KVS_ROOT)) {
                  return root;
                }
                return path.startsWith(KVS_ROOT + "/") ? secured : OPEN;
              }
            });
  }

  /** Every permission for {@code digest}'s identity, read for anyone. */
  public static List<ACL> clusterAcl(ZooKeeperDigest digest) {
    return aclList(new ACL(ALL, identity(digest)), new ACL(READ, ANYONE));
  }

  private static List<ACL> rootAcl(ZooKeeperDigest digest) {
    return aclList(new ACL(ALL, identity(digest)), new ACL(READ | CREATE, ANYONE));
  }

  /**
   * The digest scheme's identity of {@code digest}: {@code user:base64(SHA-1(user:password))}, as
   * ZooKeeper's DigestAuthenticationProvider computes it (not called directly, for the same reason
   * as ZooDefs).
   */
  static Id identity(ZooKeeperDigest digest) {
    byte[] hash;
    try {
      hash = MessageDigest.getInstance("SHA-1").digest(digest.authBytes());
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-1 is part of every JDK", e);
    }
    return new Id("digest", digest.user() + ":" + Base64.getEncoder().encodeToString(hash));
  }

  // ZooKeeper asks the list whether it contains null, which List.of answers with an exception.
  private static List<ACL> aclList(ACL... acls) {
    return Collections.unmodifiableList(Arrays.asList(acls));
  }
}

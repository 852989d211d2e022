package io.kvs.server.tcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvs.core.KvsException;
import io.kvs.core.StatusCode;
import io.kvs.core.security.ClusterSecret;
import io.kvs.core.security.ThrowawayCertificates;
import io.kvs.core.security.TlsOptions;
import io.kvs.core.wire.BlockingFrames;
import io.kvs.core.wire.ClientHandshake;
import io.kvs.core.wire.Reply;
import io.kvs.core.wire.Request;
import io.kvs.core.wire.WireCodec;
import io.kvs.engine.Engine;
import io.kvs.engine.EngineOptions;
import io.kvs.engine.Region;
import io.kvs.service.RegionService;
import io.netty.handler.ssl.JdkSslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client port (the native client door behind the region service), plain and with TLS
 * (certificates from a throwaway CA made with the {@code openssl} command): requests, bounds,
 * handshakes and refusals.
 */
class ClientPortTest {
  @TempDir Path directory;

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  private static void writeFrame(Socket socket, byte[] body) throws IOException {
    BlockingFrames.write(socket.getOutputStream(), body);
  }

  private static byte[] readFrame(Socket socket) throws IOException {
    return BlockingFrames.read(socket.getInputStream());
  }

  private static Reply readReply(Socket socket) throws IOException {
    return WireCodec.decodeReply(readFrame(socket));
  }

  private static ClientHandshake.Admission handshake(Socket socket, Optional<ClusterSecret> secret)
      throws IOException {
    return BlockingFrames.handshake(socket, secret);
  }

  /** The client port serving {@code service}, over TLS if {@code tls} is present. */
  private static ClientPort start(
      RegionService service,
      ClientPortOptions options,
      Optional<ClusterSecret> secret,
      Optional<TlsOptions> tls) {
    return NativeClientPort.start(service, options, secret, tls);
  }

  private static ClientPort start(RegionService service, ClientPortOptions options) {
    return start(service, options, Optional.empty(), Optional.empty());
  }

  private static Reply call(Socket socket, Request request) throws IOException {
    writeFrame(socket, WireCodec.encode(request));
    return readReply(socket);
  }

  @Test
  void framesAreAnsweredByTheRegionServiceAndBadPeersAreDropped() throws Exception {
    try (Engine engine = Engine.open(directory.resolve("volume"), EngineOptions.defaults());
        RegionService service = RegionService.create();
        ClientPort server = start(service, new ClientPortOptions("127.0.0.1", 0, 2, 16, 1 << 20))) {
      Region region = engine.createRegion("r");
      service.attach(5, 1, region);
      try (Socket client = new Socket("127.0.0.1", server.port());
          Socket hostile = new Socket("127.0.0.1", server.port())) {
        client.setSoTimeout(10_000);
        hostile.setSoTimeout(10_000);
        assertThat(handshake(client, Optional.empty()).status()).isEqualTo(StatusCode.OK);
        assertThat(handshake(hostile, Optional.empty()).status()).isEqualTo(StatusCode.OK);
        assertThat(call(client, Request.put(1, 5, 1, bytes("k"), bytes("v"))).status())
            .isEqualTo(StatusCode.OK);
        Reply got = call(client, Request.get(2, 5, 1, bytes("k")));
        assertThat(got.requestId()).isEqualTo(2);
        assertThat(got.value()).isEqualTo(bytes("v"));
        assertThat(call(client, Request.get(3, 6, 1, bytes("k"))).status())
            .isEqualTo(StatusCode.WRONG_REGION);
        // Malformed bytes in a frame: an INVALID_ARGUMENT reply, the connection stays.
        writeFrame(client, new byte[] {1, 2, 3});
        assertThat(readReply(client).status()).isEqualTo(StatusCode.INVALID_ARGUMENT);
        // A frame above the bound: that connection is closed...
        hostile.getOutputStream().write(new byte[] {0, 0, 0, 64}); // 1 GiB
        hostile.getOutputStream().flush();
        assertThat(hostile.getInputStream().read()).isEqualTo(-1);
        // ...and everyone else is served on.
        assertThat(call(client, Request.get(4, 5, 1, bytes("k"))).value()).isEqualTo(bytes("v"));
      }
      assertThat(server.requests()).isGreaterThanOrEqualTo(5);
    }
  }

  @Test
  void connectionsBeyondTheCapAreClosedAndCounted() throws Exception {
    try (Engine engine = Engine.open(directory.resolve("volume"), EngineOptions.defaults());
        RegionService service = RegionService.create();
        ClientPort server =
            start(service, new ClientPortOptions("127.0.0.1", 0, 2, 16, 1 << 20, 2))) {
      Region region = engine.createRegion("r");
      service.attach(5, 1, region);
      Socket first = new Socket("127.0.0.1", server.port());
      try (Socket second = new Socket("127.0.0.1", server.port())) {
        first.setSoTimeout(10_000);
        second.setSoTimeout(10_000);
        assertThat(handshake(first, Optional.empty()).status()).isEqualTo(StatusCode.OK);
        assertThat(handshake(second, Optional.empty()).status()).isEqualTo(StatusCode.OK);
        assertThat(call(first, Request.put(1, 5, 1, bytes("k"), bytes("v"))).status())
            .isEqualTo(StatusCode.OK);
        assertThat(call(second, Request.get(2, 5, 1, bytes("k"))).value()).isEqualTo(bytes("v"));
        try (Socket third = new Socket("127.0.0.1", server.port())) {
          third.setSoTimeout(10_000);
          assertThat(third.getInputStream().read()).as("the third is closed").isEqualTo(-1);
        }
        assertThat(server.refusedConnections()).isEqualTo(1);
        assertThat(server.connections()).isEqualTo(2);
        first.close();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (server.connections() > 1) {
          assertThat(System.nanoTime()).as("the closed one is counted out").isLessThan(deadline);
          LockSupport.parkNanos(1_000_000);
        }
        try (Socket again = new Socket("127.0.0.1", server.port())) {
          again.setSoTimeout(10_000);
          assertThat(handshake(again, Optional.empty()).status()).isEqualTo(StatusCode.OK);
          assertThat(call(again, Request.get(3, 5, 1, bytes("k"))).value()).isEqualTo(bytes("v"));
        }
        assertThat(call(second, Request.get(4, 5, 1, bytes("k"))).value()).isEqualTo(bytes("v"));
      } finally {
        first.close();
      }
    }
  }

  /**
   * A client that pipelines reads of a large value and never reads the replies: the server stops
   * reading it once its replies are not taken (so its memory stays bounded), and serves every
   * request once the client reads.
   */
  @Test
  void aClientThatDoesNotReadItsRepliesStopsBeingRead() throws Exception {
    int requests = 1000;
    byte[] value = new byte[64 << 10];
    try (Engine engine = Engine.open(directory.resolve("volume"), EngineOptions.defaults());
        RegionService service = RegionService.create();
        ClientPort server = start(service, new ClientPortOptions("127.0.0.1", 0, 2, 16, 1 << 20))) {
      Region region = engine.createRegion("r");
      service.attach(5, 1, region);
      try (Socket client = new Socket()) {
        client.setReceiveBufferSize(16 << 10);
        client.connect(new InetSocketAddress("127.0.0.1", server.port()));
        client.setSoTimeout(10_000);
        assertThat(handshake(client, Optional.empty()).status()).isEqualTo(StatusCode.OK);
        assertThat(call(client, Request.put(1, 5, 1, bytes("big"), value)).status())
            .isEqualTo(StatusCode.OK);
        long answeredBefore = server.requests();
        // 64 MiB of replies asked for in ~40 KiB of requests, which the socket buffers hold.
        ByteBuffer frames = ByteBuffer.allocate(requests * 64).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < requests; i++) {
          byte[] get = WireCodec.encode(Request.get(10 + i, 5, 1, bytes("big")));
          frames.putInt(get.length).put(get);
        }
        client.getOutputStream().write(frames.array(), 0, frames.position());
        client.getOutputStream().flush();
        // The server answers until the replies fill the sockets' buffers and its own output bound,
        // then stops: wait until nothing more is answered for a second.
        long answered = server.requests() - answeredBefore;
        long stableSince = System.nanoTime();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (answered < requests
            && System.nanoTime() - stableSince < TimeUnit.SECONDS.toNanos(1)) {
          assertThat(System.nanoTime()).isLessThan(deadline);
          LockSupport.parkNanos(20_000_000);
          long now = server.requests() - answeredBefore;
          if (now != answered) {
            answered = now;
            stableSince = System.nanoTime();
          }
        }
        // Socket buffers (a few MiB on loopback) and the output bound (2 MiB): about a hundred
        // replies of 64 KiB, not the thousand asked for.
        assertThat(answered).as("replies written while the client read none").isLessThan(300);
        assertThat(server.outputStalls()).isGreaterThanOrEqualTo(1);
        // Reading resumes the connection: every request is answered, once (in any order, as the
        // protocol allows: reads that need the device are answered from the deferred pool).
        Set<Long> answeredIds = new HashSet<>();
        for (int i = 0; i < requests; i++) {
          Reply reply = readReply(client);
          assertThat(answeredIds.add(reply.requestId())).as("answered twice").isTrue();
          assertThat(reply.requestId()).isBetween(10L, 10L + requests - 1);
          assertThat(reply.value()).hasSize(value.length);
        }
        assertThat(answeredIds).hasSize(requests);
      }
    }
  }

  /**
   * A reply above the output bound stops the connection only until it is written: the next request
   * on it is answered (a scan's 4 MiB page once left its connection stopped for good). The pairs
   * are medium-sized, so the scan is answered from the L0 on the shard at once (a read that needs
   * the device would be answered later, from the deferred pool) and its reply meets the bound.
   */
  @Test
  void aReplyLargerThanTheOutputBoundLeavesTheConnectionServed() throws Exception {
    try (Engine engine = Engine.open(directory.resolve("volume"), EngineOptions.defaults());
        RegionService service = RegionService.create();
        ClientPort server = start(service, ClientPortOptions.defaults())) {
      Region region = engine.createRegion("r");
      service.attach(5, 1, region);
      try (Socket client = new Socket("127.0.0.1", server.port())) {
        client.setSoTimeout(10_000);
        assertThat(handshake(client, Optional.empty()).status()).isEqualTo(StatusCode.OK);
        client.setTcpNoDelay(true); // 4,400 round trips, none waiting for a delayed ACK
        for (int i = 0; i < 4400; i++) {
          byte[] key = bytes(String.format("e%05d", i));
          assertThat(call(client, Request.put(i, 5, 1, key, new byte[1000])).status())
              .isEqualTo(StatusCode.OK);
        }
        for (int round = 0; round < 3; round++) {
          Reply page =
              call(client, Request.scan(10, 5, 1, bytes("e"), bytes("f"), 10_000, 4 << 20));
          assertThat(page.status()).isEqualTo(StatusCode.OK);
          assertThat(page.pairs()).hasSizeGreaterThan(2100); // above the 2 MiB bound
          assertThat(call(client, Request.get(11, 5, 1, bytes("e00000"))).value()).hasSize(1000);
        }
        assertThat(server.outputStalls()).isGreaterThanOrEqualTo(1);
      }
    }
  }

  /**
   * With a client secret, only a client that proves it is served: one without it, with another
   * secret, or skipping the handshake is told why and closed, and nothing it sent is executed;
   * everyone else is served on.
   */
  @Test
  void onlyClientsProvingTheClientSecretAreServed() throws Exception {
    ClusterSecret secret = ClusterSecret.of(bytes("the-client-secret-of-this-test"));
    try (Engine engine = Engine.open(directory.resolve("volume"), EngineOptions.defaults());
        RegionService service = RegionService.create();
        ClientPort server =
            start(
                service,
                new ClientPortOptions("127.0.0.1", 0, 2, 16, 1 << 20),
                Optional.of(secret),
                Optional.empty())) {
      Region region = engine.createRegion("r");
      service.attach(5, 1, region);
      try (Socket good = new Socket("127.0.0.1", server.port());
          Socket none = new Socket("127.0.0.1", server.port());
          Socket wrong = new Socket("127.0.0.1", server.port());
          Socket rude = new Socket("127.0.0.1", server.port())) {
        for (Socket socket : new Socket[] {good, none, wrong, rude}) {
          socket.setSoTimeout(10_000);
        }
        assertThat(handshake(good, Optional.of(secret)).status()).isEqualTo(StatusCode.OK);
        ClientHandshake.Admission refused = handshake(none, Optional.empty());
        assertThat(refused.status()).isEqualTo(StatusCode.INVALID_ARGUMENT);
        assertThat(refused.message()).contains("client secret");
        assertThat(none.getInputStream().read()).isEqualTo(-1);
        ClusterSecret other = ClusterSecret.of(bytes("not-the-client-secret-at-all"));
        assertThat(handshake(wrong, Optional.of(other)).status())
            .isEqualTo(StatusCode.INVALID_ARGUMENT);
        // A request instead of a Hello: refused, and never executed.
        readFrame(rude); // the Challenge
        writeFrame(rude, WireCodec.encode(Request.put(1, 5, 1, bytes("rude"), bytes("x"))));
        assertThat(ClientHandshake.decodeAdmission(readFrame(rude)).status())
            .isEqualTo(StatusCode.INVALID_ARGUMENT);
        assertThat(rude.getInputStream().read()).isEqualTo(-1);
        assertThat(region.get(bytes("rude"))).isNull();
        assertThat(call(good, Request.put(2, 5, 1, bytes("k"), bytes("v"))).status())
            .isEqualTo(StatusCode.OK);
      }
      assertThat(server.refusals()).isEqualTo(3);
    }
  }

  /**
   * The client port is a client's door: a replication message sent to it (a send-index TRIM) is a
   * malformed client request, answered INVALID_ARGUMENT, and never reaches replication.
   */
  @Test
  void replicationMessagesOnTheClientPortAreRefused() throws Exception {
    try (Engine engine = Engine.open(directory.resolve("volume"), EngineOptions.defaults());
        RegionService service = RegionService.create();
        ClientPort server = start(service, new ClientPortOptions("127.0.0.1", 0, 2, 16, 1 << 20))) {
      service.attach(5, 1, engine.createRegion("r"));
      try (Socket client = new Socket("127.0.0.1", server.port())) {
        client.setSoTimeout(10_000);
        assertThat(handshake(client, Optional.empty()).status()).isEqualTo(StatusCode.OK);
        // TRIM (type 6) of region 5 at epoch 1, one large-log segment.
        ByteBuffer trim = ByteBuffer.allocate(56).order(ByteOrder.LITTLE_ENDIAN);
        trim.putInt(0x5253564b).put((byte) 6).put((byte) 2).put(new byte[2]).putLong(5).putLong(1);
        trim.putInt(1).putInt(0).put((byte) 2).put(new byte[7]).putLong(3).putLong(0);
        writeFrame(client, trim.array());
        Reply reply = readReply(client);
        assertThat(reply.status()).isEqualTo(StatusCode.INVALID_ARGUMENT);
        assertThat(reply.message()).contains("client's connection");
      }
    }
  }

  /** A throwaway CA in the test's directory, with the server's certificate ("server"). */
  private ThrowawayCertificates certificates() throws IOException {
    ThrowawayCertificates certificates = new ThrowawayCertificates(directory.resolve("tls"));
    certificates.createAuthority();
    return certificates;
  }

  /**
   * A TLS socket to {@code port} trusting the CA of {@code certificates}, presenting the
   * certificate of {@code name} if present; its TLS handshake done (a server that refuses a client
   * without a certificate may say so only when the client reads, with TLS 1.3).
   */
  private static Socket tlsSocket(
      ThrowawayCertificates certificates, Optional<String> name, int port) throws IOException {
    SslContextBuilder builder =
        SslContextBuilder.forClient()
            .sslProvider(SslProvider.JDK)
            .trustManager(certificates.authority().toFile());
    if (name.isPresent()) {
      TlsOptions identity = certificates.options(name.get(), false);
      builder.keyManager(identity.certificate().toFile(), identity.privateKey().toFile());
    }
    JdkSslContext context = (JdkSslContext) builder.build();
    SSLSocket socket =
        (SSLSocket) context.context().getSocketFactory().createSocket("127.0.0.1", port);
    socket.setSoTimeout(10_000);
    socket.startHandshake();
    return socket;
  }

  /** Reads until the server closes {@code socket} (a TLS alert may come first); false if not. */
  private static boolean closedByServer(Socket socket) throws IOException {
    InputStream in = socket.getInputStream();
    byte[] buffer = new byte[4096];
    for (int total = 0; total < (64 << 10); ) {
      int n = in.read(buffer);
      if (n < 0) {
        return true;
      }
      total += n;
    }
    return false;
  }

  /**
   * With TLS, a TLS client runs the handshake inside it and is served; a plaintext client is
   * refused and closed, and the TLS clients are served on.
   */
  @Test
  void overTlsATlsClientIsServedAndAPlaintextOneRefused() throws Exception {
    ThrowawayCertificates certificates = certificates();
    try (Engine engine = Engine.open(directory.resolve("volume"), EngineOptions.defaults());
        RegionService service = RegionService.create();
        ClientPort server =
            start(
                service,
                new ClientPortOptions("127.0.0.1", 0, 2, 16, 1 << 20),
                Optional.empty(),
                Optional.of(certificates.options("server", false)))) {
      Region region = engine.createRegion("r");
      service.attach(5, 1, region);
      try (Socket client = tlsSocket(certificates, Optional.empty(), server.port());
          Socket plain = new Socket("127.0.0.1", server.port())) {
        plain.setSoTimeout(10_000);
        assertThat(handshake(client, Optional.empty()).status()).isEqualTo(StatusCode.OK);
        assertThat(call(client, Request.put(1, 5, 1, bytes("k"), bytes("v"))).status())
            .isEqualTo(StatusCode.OK);
        // A plaintext client's frame is no TLS ClientHello.
        writeFrame(plain, WireCodec.encode(Request.get(2, 5, 1, bytes("k"))));
        assertThat(closedByServer(plain)).as("the plaintext client is closed").isTrue();
        // A large value both ways, through many TLS records.
        byte[] large = new byte[512 << 10];
        large[large.length - 1] = 7;
        assertThat(call(client, Request.put(3, 5, 1, bytes("large"), large)).status())
            .isEqualTo(StatusCode.OK);
        assertThat(call(client, Request.get(4, 5, 1, bytes("large"))).value()).isEqualTo(large);
        assertThat(call(client, Request.get(5, 5, 1, bytes("k"))).value()).isEqualTo(bytes("v"));
      }
      assertThat(server.refusals()).isEqualTo(1);
    }
  }

  /**
   * With mutual TLS, a client with a certificate from the CA is served; one without a certificate
   * is refused at the TLS handshake (it never sees the client handshake), and the good one is
   * served on.
   */
  @Test
  void mutualTlsRefusesAClientWithoutACertificate() throws Exception {
    ThrowawayCertificates certificates = certificates();
    try (Engine engine = Engine.open(directory.resolve("volume"), EngineOptions.defaults());
        RegionService service = RegionService.create();
        ClientPort server =
            start(
                service,
                new ClientPortOptions("127.0.0.1", 0, 2, 16, 1 << 20),
                Optional.empty(),
                Optional.of(certificates.options("server", true)))) {
      Region region = engine.createRegion("r");
      service.attach(5, 1, region);
      try (Socket good = tlsSocket(certificates, Optional.of("app"), server.port())) {
        assertThat(handshake(good, Optional.empty()).status()).isEqualTo(StatusCode.OK);
        assertThatThrownBy(
                () -> {
                  try (Socket anonymous =
                      tlsSocket(certificates, Optional.empty(), server.port())) {
                    handshake(anonymous, Optional.empty());
                  }
                })
            .isInstanceOf(IOException.class);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (server.refusals() < 1) {
          assertThat(System.nanoTime()).as("the refusal is counted").isLessThan(deadline);
          LockSupport.parkNanos(1_000_000);
        }
        assertThat(call(good, Request.put(1, 5, 1, bytes("k"), bytes("v"))).status())
            .isEqualTo(StatusCode.OK);
      }
      assertThat(server.refusals()).isEqualTo(1);
      assertThat(region.get(bytes("k"))).isEqualTo(bytes("v"));
    }
  }

  /** A TLS file that is missing or holds no PEM stops the native door's start, naming the file. */
  @Test
  void aBrokenTlsFileStopsTheStartNamingIt() throws Exception {
    ThrowawayCertificates certificates = certificates();
    TlsOptions good = certificates.options("server", false);
    Path garbage = Files.writeString(directory.resolve("garbage.pem"), "not PEM\n");
    Path missing = directory.resolve("missing.pem");
    // Each case: the options, and the file the error must name.
    List<Map.Entry<TlsOptions, Path>> cases =
        List.of(
            Map.entry(new TlsOptions(garbage, good.privateKey(), good.trustedCa(), false), garbage),
            Map.entry(
                new TlsOptions(good.certificate(), garbage, good.trustedCa(), false), garbage),
            Map.entry(
                new TlsOptions(good.certificate(), good.privateKey(), missing, true), missing));
    try (RegionService service = RegionService.create()) {
      for (Map.Entry<TlsOptions, Path> bad : cases) {
        assertThatThrownBy(
                () ->
                    start(
                        service,
                        ClientPortOptions.defaults(),
                        Optional.empty(),
                        Optional.of(bad.getKey())))
            .isInstanceOf(KvsException.class)
            .hasMessageContaining(bad.getValue().toString());
      }
    }
  }
}

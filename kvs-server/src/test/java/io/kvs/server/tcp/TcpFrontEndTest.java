package io.kvs.server.tcp;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.core.StatusCode;
import io.kvs.core.wire.Reply;
import io.kvs.core.wire.Request;
import io.kvs.core.wire.WireCodec;
import io.kvs.engine.Engine;
import io.kvs.engine.EngineOptions;
import io.kvs.engine.Region;
import io.kvs.service.RegionService;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TcpFrontEndTest {
  @TempDir Path directory;

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  private static void writeFrame(Socket socket, byte[] body) throws IOException {
    OutputStream out = socket.getOutputStream();
    out.write(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(body.length).array());
    out.write(body);
    out.flush();
  }

  private static Reply readReply(Socket socket) throws IOException {
    DataInputStream in = new DataInputStream(socket.getInputStream());
    byte[] length = new byte[4];
    in.readFully(length);
    byte[] body = new byte[ByteBuffer.wrap(length).order(ByteOrder.LITTLE_ENDIAN).getInt()];
    in.readFully(body);
    return WireCodec.decodeReply(body);
  }

  private static Reply call(Socket socket, Request request) throws IOException {
    writeFrame(socket, WireCodec.encode(request));
    return readReply(socket);
  }

  @Test
  void framesAreAnsweredByTheRegionServiceAndBadPeersAreDropped() throws Exception {
    try (Engine engine = Engine.open(directory.resolve("volume"), EngineOptions.defaults());
        RegionService service = RegionService.create();
        TcpFrontEnd server =
            TcpFrontEnd.start(service, new TcpFrontEnd.Options("127.0.0.1", 0, 1, 16, 1 << 20))) {
      Region region = engine.createRegion("r");
      service.attach(5, 1, region);
      try (Socket client = new Socket("127.0.0.1", server.port());
          Socket hostile = new Socket("127.0.0.1", server.port())) {
        client.setSoTimeout(10_000);
        hostile.setSoTimeout(10_000);
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
}

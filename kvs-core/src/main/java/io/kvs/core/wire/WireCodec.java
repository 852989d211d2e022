package io.kvs.core.wire;

import io.kvs.core.InvalidRequestException;
import io.kvs.core.KeyValue;
import io.kvs.core.StatusCode;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Encodes and decodes the wire protocol's requests and replies (docs/PROTOCOL.md; the C++ twin is
 * kvs-native's {@code wire/messages.h}, and both pass the vectors in {@code
 * testdata/vectors/wire.txt}). Decoders consume exactly the bytes they are given and throw {@link
 * InvalidRequestException} (status INVALID_ARGUMENT, message starting "malformed message") for
 * anything that does not match the tables; they never read beyond the input.
 */
public final class WireCodec {
  /** The protocol version this code speaks. */
  public static final int VERSION = 1;

  public static final int REQUEST_HEADER_BYTES = 32;
  public static final int REPLY_HEADER_BYTES = 16;
  public static final int KEY_BYTES_MAX = 4096;
  public static final int VALUE_BYTES_MAX = 1 << 20;
  public static final int SCAN_LIMIT_MAX = 10_000;
  public static final int SCAN_BYTES_MAX = 4 << 20;
  public static final int MULTI_GET_KEYS_MAX = 1024;
  public static final int BATCH_WRITES_MAX = 1024;

  /**
   * The most key and value bytes of a BATCH's writes together that a region applies (one largest
   * pair fits); more is refused with TOO_LARGE.
   */
  public static final int BATCH_BYTES_MAX = VALUE_BYTES_MAX + KEY_BYTES_MAX;

  public static final int MESSAGE_TEXT_BYTES_MAX = 4096;

  /** The largest encoded request or reply: every limit above fits. */
  public static final int MESSAGE_BYTES_MAX = 8 << 20;

  private static final int NO_END_BOUND = 0xffffffff;

  /** A COMPARE_AND_SET's size of "no value": none expected, or delete the key. */
  private static final int NO_VALUE = 0xffffffff;

  /** A BATCH write's kind. */
  private static final int BATCH_PUT = 1;

  private static final int BATCH_DELETE = 2;

  private WireCodec() {}

  // --- Requests -----------------------------------------------------------------------------

  /** Appends {@code request}'s encoding to {@code out}. */
  public static void encode(Request request, ByteBuf out) {
    out.writeByte(VERSION);
    out.writeByte(request.opcode().code());
    out.writeZero(6);
    out.writeLongLE(request.requestId());
    out.writeLongLE(request.regionId());
    out.writeLongLE(request.epoch());
    switch (request.opcode()) {
      case NOOP -> {}
      case PUT -> {
        out.writeIntLE(request.key().length);
        out.writeIntLE(request.value().length);
        out.writeBytes(request.key());
        out.writeBytes(request.value());
      }
      case GET, DELETE -> writeSized(out, request.key());
      case SCAN, SCAN_REVERSE -> {
        out.writeIntLE(request.key().length);
        out.writeIntLE(request.end() == null ? NO_END_BOUND : request.end().length);
        out.writeIntLE(request.limit());
        out.writeIntLE(request.maxBytes());
        out.writeBytes(request.key());
        if (request.end() != null) {
          out.writeBytes(request.end());
        }
      }
      case MULTI_GET -> {
        out.writeIntLE(request.keys().size());
        for (byte[] key : request.keys()) {
          writeSized(out, key);
        }
      }
      case COMPARE_AND_SET -> {
        out.writeIntLE(request.key().length);
        out.writeIntLE(request.expected() == null ? NO_VALUE : request.expected().length);
        out.writeIntLE(request.value() == null ? NO_VALUE : request.value().length);
        writeWriteId(out, request.writeId());
        out.writeBytes(request.key());
        if (request.expected() != null) {
          out.writeBytes(request.expected());
        }
        if (request.value() != null) {
          out.writeBytes(request.value());
        }
      }
      case INCREMENT -> {
        out.writeIntLE(request.key().length);
        out.writeLongLE(request.delta());
        writeWriteId(out, request.writeId());
        out.writeBytes(request.key());
      }
      case BATCH -> {
        out.writeIntLE(request.writes().size());
        for (BatchWrite write : request.writes()) {
          out.writeByte(write.put() ? BATCH_PUT : BATCH_DELETE);
          out.writeIntLE(write.key().length);
          out.writeIntLE(write.put() ? write.value().length : 0);
          out.writeBytes(write.key());
          if (write.put()) {
            out.writeBytes(write.value());
          }
        }
      }
    }
  }

  /** A conditional write's id: client, sequence, floor (u64 each), flags (u32, bit 0: retry). */
  private static void writeWriteId(ByteBuf out, WriteId id) {
    out.writeLongLE(id.client());
    out.writeLongLE(id.sequence());
    out.writeLongLE(id.floor());
    out.writeIntLE(id.retry() ? 1 : 0);
  }

  private static WriteId readWriteId(ByteBuf in) {
    if (in.readableBytes() < 28) {
      throw malformed("body is cut short");
    }
    long client = in.readLongLE();
    long sequence = in.readLongLE();
    long floor = in.readLongLE();
    int flags = in.readIntLE();
    if (flags != 0 && flags != 1) {
      throw malformed("write id flags " + Integer.toUnsignedString(flags));
    }
    WriteId id = new WriteId(client, sequence, floor, flags == 1);
    return id.equals(WriteId.NONE) ? WriteId.NONE : id;
  }

  /** {@code request}'s encoding as an array. */
  public static byte[] encode(Request request) {
    ByteBuf out = Unpooled.buffer();
    encode(request, out);
    return toArray(out);
  }

  /** Decodes all readable bytes of {@code in} (consuming them) as one request. */
  public static Request decodeRequest(ByteBuf in) {
    int size = in.readableBytes();
    if (size < REQUEST_HEADER_BYTES) {
      throw malformed("request header of " + size + " bytes is short");
    }
    int version = in.readUnsignedByte();
    int code = in.readUnsignedByte();
    requireZeros(in, 6);
    long requestId = in.readLongLE();
    long regionId = in.readLongLE();
    long epoch = in.readLongLE();
    checkVersion(version);
    Opcode opcode = opcode(code);
    Request request;
    try {
      request = decodeBody(in, opcode, requestId, regionId, epoch);
    } catch (InvalidRequestException e) {
      throw e.getMessage().startsWith("malformed") ? e : malformed(e.getMessage());
    }
    requireEnd(in, opcode);
    return request;
  }

  private static Request decodeBody(
      ByteBuf in, Opcode opcode, long requestId, long regionId, long epoch) {
    byte[] none = new byte[0];
    return switch (opcode) {
      case NOOP -> new Request(opcode, requestId, regionId, epoch, none, none, null, 0, 0, none());
      case PUT -> {
        long keySize = readSize(in);
        long valueSize = readSize(in);
        requireAtMost(keySize, KEY_BYTES_MAX, "key");
        requireAtMost(valueSize, VALUE_BYTES_MAX, "value");
        byte[] key = readBytes(in, keySize);
        yield Request.put(requestId, regionId, epoch, key, readBytes(in, valueSize));
      }
      case GET -> Request.get(requestId, regionId, epoch, readSized(in, KEY_BYTES_MAX, "key"));
      case DELETE ->
          Request.delete(requestId, regionId, epoch, readSized(in, KEY_BYTES_MAX, "key"));
      case SCAN, SCAN_REVERSE -> {
        long startSize = readSize(in);
        int endSize = readInt(in);
        int limit = readInt(in);
        int maxBytes = readInt(in);
        requireAtMost(startSize, KEY_BYTES_MAX, "scan start");
        if (endSize != NO_END_BOUND) {
          requireAtMost(Integer.toUnsignedLong(endSize), KEY_BYTES_MAX, "scan end");
        }
        byte[] start = readBytes(in, startSize);
        byte[] end = endSize == NO_END_BOUND ? null : readBytes(in, endSize);
        yield opcode == Opcode.SCAN
            ? Request.scan(requestId, regionId, epoch, start, end, limit, maxBytes)
            : Request.scanReverse(requestId, regionId, epoch, start, end, limit, maxBytes);
      }
      case MULTI_GET -> {
        long count = readSize(in);
        if (count == 0 || count > MULTI_GET_KEYS_MAX) {
          throw malformed("multi-get of " + count + " keys");
        }
        List<byte[]> keys = new ArrayList<>();
        for (long i = 0; i < count; i++) {
          keys.add(readSized(in, KEY_BYTES_MAX, "multi-get key"));
        }
        yield Request.multiGet(requestId, regionId, epoch, keys);
      }
      case COMPARE_AND_SET -> {
        long keySize = readSize(in);
        int expectedSize = readInt(in);
        int valueSize = readInt(in);
        requireAtMost(keySize, KEY_BYTES_MAX, "key");
        if (expectedSize != NO_VALUE) {
          requireAtMost(Integer.toUnsignedLong(expectedSize), VALUE_BYTES_MAX, "expected value");
        }
        if (valueSize != NO_VALUE) {
          requireAtMost(Integer.toUnsignedLong(valueSize), VALUE_BYTES_MAX, "value");
        }
        WriteId writeId = readWriteId(in);
        byte[] key = readBytes(in, keySize);
        byte[] expected = expectedSize == NO_VALUE ? null : readBytes(in, expectedSize);
        byte[] value = valueSize == NO_VALUE ? null : readBytes(in, valueSize);
        yield Request.compareAndSet(requestId, regionId, epoch, key, expected, value)
            .withWriteId(writeId);
      }
      case INCREMENT -> {
        long keySize = readSize(in);
        if (in.readableBytes() < 8) {
          throw malformed("body is cut short");
        }
        long delta = in.readLongLE();
        requireAtMost(keySize, KEY_BYTES_MAX, "key");
        WriteId writeId = readWriteId(in);
        yield Request.increment(requestId, regionId, epoch, readBytes(in, keySize), delta)
            .withWriteId(writeId);
      }
      case BATCH -> {
        long count = readSize(in);
        if (count > BATCH_WRITES_MAX) {
          throw malformed("batch of " + count + " writes");
        }
        List<BatchWrite> writes = new ArrayList<>();
        for (long i = 0; i < count; i++) {
          int kind = in.isReadable() ? in.readUnsignedByte() : -1;
          if (kind != BATCH_PUT && kind != BATCH_DELETE) {
            throw malformed("batch write " + i + " of kind " + kind);
          }
          long keySize = readSize(in);
          long valueSize = readSize(in);
          requireAtMost(keySize, KEY_BYTES_MAX, "batch key");
          requireAtMost(valueSize, kind == BATCH_PUT ? VALUE_BYTES_MAX : 0, "batch value");
          byte[] key = readBytes(in, keySize);
          writes.add(new BatchWrite(key, kind == BATCH_PUT ? readBytes(in, valueSize) : null));
        }
        yield Request.batch(requestId, regionId, epoch, writes);
      }
    };
  }

  /** Decodes {@code bytes} as one request. */
  public static Request decodeRequest(byte[] bytes) {
    return decodeRequest(Unpooled.wrappedBuffer(bytes));
  }

  // --- Replies ------------------------------------------------------------------------------

  /** Appends {@code reply}'s encoding to {@code out}. */
  public static void encode(Reply reply, ByteBuf out) {
    out.writeByte(VERSION);
    out.writeByte(reply.opcode().code());
    out.writeByte(reply.status().code());
    out.writeZero(5);
    out.writeLongLE(reply.requestId());
    if (reply.status() != StatusCode.OK) {
      writeSized(out, reply.message().getBytes(StandardCharsets.UTF_8));
      return;
    }
    switch (reply.opcode()) {
      case NOOP, PUT, DELETE, BATCH -> {}
      case GET -> writeSized(out, reply.value());
      case SCAN, SCAN_REVERSE -> {
        out.writeIntLE(reply.pairs().size());
        out.writeByte(reply.more() ? 1 : 0);
        for (KeyValue pair : reply.pairs()) {
          out.writeIntLE(pair.key().length);
          out.writeIntLE(pair.value().length);
          out.writeBytes(pair.key());
          out.writeBytes(pair.value());
        }
      }
      case MULTI_GET -> {
        out.writeIntLE(reply.values().size());
        for (byte[] value : reply.values()) {
          out.writeByte(value == null ? 0 : 1);
          writeSized(out, value == null ? new byte[0] : value);
        }
      }
      case COMPARE_AND_SET -> {
        out.writeByte(reply.applied() ? 1 : 0);
        out.writeByte(reply.current() == null ? 0 : 1);
        writeSized(out, reply.current() == null ? new byte[0] : reply.current());
        out.writeLongLE(reply.lsn());
      }
      case INCREMENT -> {
        out.writeLongLE(reply.counter());
        out.writeLongLE(reply.lsn());
      }
    }
  }

  /** {@code reply}'s encoding as an array. */
  public static byte[] encode(Reply reply) {
    ByteBuf out = Unpooled.buffer();
    encode(reply, out);
    return toArray(out);
  }

  /** Decodes all readable bytes of {@code in} (consuming them) as one reply. */
  public static Reply decodeReply(ByteBuf in) {
    int size = in.readableBytes();
    if (size < REPLY_HEADER_BYTES) {
      throw malformed("reply header of " + size + " bytes is short");
    }
    int version = in.readUnsignedByte();
    int code = in.readUnsignedByte();
    int statusCode = in.readUnsignedByte();
    requireZeros(in, 5);
    long requestId = in.readLongLE();
    checkVersion(version);
    Opcode opcode = opcode(code);
    StatusCode status = StatusCode.fromCode(statusCode);
    if (status.code() != statusCode) {
      throw malformed("unknown status " + statusCode);
    }
    Reply reply;
    if (status != StatusCode.OK) {
      byte[] message = readSized(in, MESSAGE_TEXT_BYTES_MAX, "error message");
      reply =
          new Reply(
              opcode,
              status,
              requestId,
              new String(message, StandardCharsets.UTF_8),
              new byte[0],
              List.of(),
              false,
              List.of());
      requireEnd(in, opcode);
      return reply;
    }
    reply =
        switch (opcode) {
          case NOOP, PUT, DELETE, BATCH -> Reply.ok(opcode, requestId);
          case GET -> Reply.value(requestId, readSized(in, VALUE_BYTES_MAX, "value"));
          case SCAN, SCAN_REVERSE -> {
            long count = readSize(in);
            int more = in.isReadable() ? in.readUnsignedByte() : -1;
            if (count > SCAN_LIMIT_MAX || more < 0 || more > 1) {
              throw malformed("scan reply of " + count + " pairs, more=" + more);
            }
            List<KeyValue> pairs = new ArrayList<>();
            for (long i = 0; i < count; i++) {
              long keySize = readSize(in);
              long valueSize = readSize(in);
              requireAtMost(keySize, KEY_BYTES_MAX, "scan key");
              requireAtMost(valueSize, VALUE_BYTES_MAX, "scan value");
              byte[] key = readBytes(in, keySize);
              pairs.add(new KeyValue(key, readBytes(in, valueSize)));
            }
            yield opcode == Opcode.SCAN
                ? Reply.scan(requestId, pairs, more == 1)
                : Reply.scanReverse(requestId, pairs, more == 1);
          }
          case MULTI_GET -> {
            long count = readSize(in);
            requireAtMost(count, MULTI_GET_KEYS_MAX, "multi-get reply count");
            List<byte[]> values = new ArrayList<>();
            for (long i = 0; i < count; i++) {
              int found = in.isReadable() ? in.readUnsignedByte() : -1;
              byte[] value = readSized(in, VALUE_BYTES_MAX, "multi-get value");
              if (found < 0 || found > 1 || (found == 0 && value.length > 0)) {
                throw malformed("multi-get reply entry " + i + " is inconsistent");
              }
              values.add(found == 1 ? value : null);
            }
            yield Reply.multiGet(requestId, values);
          }
          case COMPARE_AND_SET -> {
            int applied = in.isReadable() ? in.readUnsignedByte() : -1;
            int present = in.isReadable() ? in.readUnsignedByte() : -1;
            byte[] current = readSized(in, VALUE_BYTES_MAX, "current value");
            if (applied < 0
                || applied > 1
                || present < 0
                || present > 1
                || (applied == 1 && present == 1)
                || (present == 0 && current.length > 0)
                || in.readableBytes() < 8) {
              throw malformed("compare-and-set reply is inconsistent");
            }
            yield Reply.compareAndSet(
                requestId, applied == 1, present == 1 ? current : null, in.readLongLE());
          }
          case INCREMENT -> {
            if (in.readableBytes() < 16) {
              throw malformed("increment reply is cut short");
            }
            long counter = in.readLongLE();
            yield Reply.increment(requestId, counter, in.readLongLE());
          }
        };
    requireEnd(in, opcode);
    return reply;
  }

  /** Decodes {@code bytes} as one reply. */
  public static Reply decodeReply(byte[] bytes) {
    return decodeReply(Unpooled.wrappedBuffer(bytes));
  }

  // --- Validation (used by the records' constructors) ---------------------------------------

  static void validate(
      Opcode opcode,
      byte[] key,
      byte[] value,
      byte[] end,
      int limit,
      int maxBytes,
      List<byte[]> keys,
      byte[] expected,
      long delta,
      List<BatchWrite> writes) {
    if (!writes.isEmpty() && opcode != Opcode.BATCH) {
      throw invalid(opcode + " carries no batch writes");
    }
    if (opcode == null
        || key == null
        || (value == null && opcode != Opcode.COMPARE_AND_SET)
        || keys == null) {
      throw new NullPointerException("opcode, key, value and keys must not be null");
    }
    if ((expected != null && opcode != Opcode.COMPARE_AND_SET)
        || (delta != 0 && opcode != Opcode.INCREMENT)) {
      throw invalid("an expected value or a delta belongs to another operation than " + opcode);
    }
    switch (opcode) {
      case NOOP -> {}
      case PUT -> {
        checkKey(key, "key");
        if (value.length > VALUE_BYTES_MAX) {
          throw invalid("value of " + value.length + " bytes exceeds " + VALUE_BYTES_MAX);
        }
      }
      case GET, DELETE, INCREMENT -> checkKey(key, "key");
      case COMPARE_AND_SET -> {
        checkKey(key, "key");
        for (byte[] each : new byte[][] {expected, value}) {
          if (each != null && each.length > VALUE_BYTES_MAX) {
            throw invalid("value of " + each.length + " bytes exceeds " + VALUE_BYTES_MAX);
          }
        }
      }
      case SCAN, SCAN_REVERSE -> {
        if (key.length > KEY_BYTES_MAX || (end != null && end.length > KEY_BYTES_MAX)) {
          throw invalid("scan bound exceeds " + KEY_BYTES_MAX + " bytes");
        }
        if (limit <= 0 || limit > SCAN_LIMIT_MAX) {
          throw invalid("scan limit " + Integer.toUnsignedString(limit) + " outside 1..10000");
        }
        if (maxBytes <= 0 || maxBytes > SCAN_BYTES_MAX) {
          throw invalid("scan max_bytes " + Integer.toUnsignedString(maxBytes) + " outside 1..");
        }
      }
      case MULTI_GET -> {
        if (keys.isEmpty() || keys.size() > MULTI_GET_KEYS_MAX) {
          throw invalid("multi-get of " + keys.size() + " keys outside 1..1024");
        }
        for (byte[] each : keys) {
          checkKey(each, "multi-get key");
        }
      }
      case BATCH -> {
        if (writes.isEmpty() || writes.size() > BATCH_WRITES_MAX) {
          throw invalid("batch of " + writes.size() + " writes outside 1.." + BATCH_WRITES_MAX);
        }
        for (BatchWrite write : writes) {
          checkKey(write.key(), "batch key");
          if (write.put() && write.value().length > VALUE_BYTES_MAX) {
            throw invalid(
                "batch value of " + write.value().length + " bytes exceeds " + VALUE_BYTES_MAX);
          }
        }
      }
    }
  }

  static void validate(
      Opcode opcode,
      StatusCode status,
      String message,
      byte[] value,
      List<KeyValue> pairs,
      List<byte[]> values,
      boolean applied,
      byte[] current) {
    if (opcode == null || status == null || message == null || value == null || pairs == null) {
      throw new NullPointerException("reply fields must not be null");
    }
    if (current != null && (applied || current.length > VALUE_BYTES_MAX)) {
      throw invalid("a compare-and-set's current value is sent only when it was not applied");
    }
    if (message.getBytes(StandardCharsets.UTF_8).length > MESSAGE_TEXT_BYTES_MAX) {
      throw invalid("error message exceeds " + MESSAGE_TEXT_BYTES_MAX + " bytes");
    }
    if (value.length > VALUE_BYTES_MAX || pairs.size() > SCAN_LIMIT_MAX) {
      throw invalid("reply exceeds the protocol's limits");
    }
    if (values.size() > MULTI_GET_KEYS_MAX) {
      throw invalid("multi-get reply of " + values.size() + " values");
    }
  }

  /** {@code message} cut to the protocol's limit, at a character boundary. */
  static String fitMessage(String message) {
    String text = message == null ? "" : message;
    while (text.getBytes(StandardCharsets.UTF_8).length > MESSAGE_TEXT_BYTES_MAX) {
      text = text.substring(0, Math.min(text.length() - 1, MESSAGE_TEXT_BYTES_MAX));
    }
    return text;
  }

  // --- Helpers ------------------------------------------------------------------------------

  private static List<byte[]> none() {
    return List.of();
  }

  private static void checkKey(byte[] key, String what) {
    if (key.length == 0) {
      throw invalid(what + " is empty");
    }
    if (key.length > KEY_BYTES_MAX) {
      throw invalid(what + " of " + key.length + " bytes exceeds " + KEY_BYTES_MAX);
    }
  }

  private static void checkVersion(int version) {
    if (version != VERSION) {
      throw malformed("protocol version " + version + ", this end speaks " + VERSION);
    }
  }

  private static Opcode opcode(int code) {
    Opcode opcode = Opcode.fromCode(code);
    if (opcode == null) {
      throw malformed("unknown opcode " + code);
    }
    return opcode;
  }

  private static void requireZeros(ByteBuf in, int count) {
    for (int i = 0; i < count; i++) {
      if (in.readByte() != 0) {
        throw malformed("reserved header bytes are not zero");
      }
    }
  }

  private static void requireEnd(ByteBuf in, Opcode opcode) {
    if (in.isReadable()) {
      throw malformed(opcode + " body has " + in.readableBytes() + " trailing bytes");
    }
  }

  private static int readInt(ByteBuf in) {
    if (in.readableBytes() < 4) {
      throw malformed("body is cut short");
    }
    return in.readIntLE();
  }

  private static long readSize(ByteBuf in) {
    return Integer.toUnsignedLong(readInt(in));
  }

  private static void requireAtMost(long size, long max, String what) {
    if (size > max) {
      throw malformed(what + " of " + size + " bytes exceeds " + max);
    }
  }

  private static byte[] readBytes(ByteBuf in, long size) {
    if (size > in.readableBytes()) {
      throw malformed("a field of " + size + " bytes runs past the end");
    }
    byte[] bytes = new byte[(int) size];
    in.readBytes(bytes);
    return bytes;
  }

  private static byte[] readSized(ByteBuf in, long max, String what) {
    long size = readSize(in);
    requireAtMost(size, max, what);
    return readBytes(in, size);
  }

  private static void writeSized(ByteBuf out, byte[] bytes) {
    out.writeIntLE(bytes.length);
    out.writeBytes(bytes);
  }

  private static byte[] toArray(ByteBuf buffer) {
    byte[] bytes = new byte[buffer.readableBytes()];
    buffer.readBytes(bytes);
    buffer.release();
    return bytes;
  }

  private static InvalidRequestException invalid(String message) {
    return new InvalidRequestException(StatusCode.INVALID_ARGUMENT, message);
  }

  private static InvalidRequestException malformed(String message) {
    return new InvalidRequestException(
        StatusCode.INVALID_ARGUMENT, "malformed message: " + message);
  }
}

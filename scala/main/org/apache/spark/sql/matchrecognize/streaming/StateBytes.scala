package org.apache.spark.sql.matchrecognize.streaming

import java.io.{DataInputStream, DataOutputStream, InputStream, OutputStream}

/**
 * Byte streams under the `DataInputStream` and `DataOutputStream` that read and write a
 * key's state. The JDK's `ByteArrayInputStream` and `ByteArrayOutputStream` lock on every
 * call, and `readInt` and `writeInt` make four calls each: in Real-Time Mode, where a key's
 * state is read and written for each row, that locking took most of the codec's time.
 * These do the same without locks; one stream is only ever used by one thread.
 */
private[streaming] object StateBytes {

  def reader(data: Array[Byte]): DataInputStream = new DataInputStream(new Reader(data))

  /**
   * A writer, and a function giving what was written once the writer is flushed. The
   * thread's buffer is reused from one state to the next (up to `KeptBufferBytes`), so that
   * a state is copied once, not once per doubling of a buffer grown from nothing.
   */
  def writer(): (DataOutputStream, () => Array[Byte]) = {
    val bytes = buffers.get()
    bytes.size = 0
    val written = () => {
      val copy = java.util.Arrays.copyOf(bytes.buffer, bytes.size)
      if (bytes.buffer.length > KeptBufferBytes) buffers.remove()
      copy
    }
    (new DataOutputStream(bytes), written)
  }

  private val KeptBufferBytes = 16 * 1024 * 1024

  private val buffers = ThreadLocal.withInitial[Writer](() => new Writer(4096))

  private final class Reader(data: Array[Byte]) extends InputStream {
    private var position = 0

    override def read(): Int =
      if (position < data.length) { position += 1; data(position - 1) & 0xff }
      else -1

    override def read(into: Array[Byte], offset: Int, length: Int): Int =
      if (length == 0) 0
      else if (position >= data.length) -1
      else {
        val n = math.min(length, data.length - position)
        System.arraycopy(data, position, into, offset, n)
        position += n
        n
      }

    override def available(): Int = data.length - position
  }

  private final class Writer(initialSize: Int) extends OutputStream {
    var buffer = new Array[Byte](math.max(initialSize, 16))
    var size = 0

    private def room(n: Int): Unit = if (size + n > buffer.length) {
      buffer = java.util.Arrays.copyOf(buffer, math.max(buffer.length * 2, size + n))
    }

    override def write(b: Int): Unit = {
      room(1)
      buffer(size) = b.toByte
      size += 1
    }

    override def write(from: Array[Byte], offset: Int, length: Int): Unit = {
      room(length)
      System.arraycopy(from, offset, buffer, size, length)
      size += length
    }
  }
}

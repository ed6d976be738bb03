#!/usr/bin/python3
"""Reads TensorBoard event files with a decoder that is not primus-cli's.

The TFRecord frame (length, masked CRC-32C of the length, data, masked CRC-32C
of the data) is checked with crcmod's CRC-32C; each record is parsed by
protobuf's own Python runtime into an Event message built from TensorBoard's
public schema (tensorflow/core/util/event.proto and
tensorflow/core/framework/summary.proto: the fields primus-cli writes).

usage: read_tfevents.py FILE...
Prints one JSON object per event: {"wall_time", "step", "file_version"?, "scalars": {tag: value}}.
Exits 1 naming the file and offset on a bad frame or CRC, 2 when protobuf or
crcmod is missing (Debian: python3-protobuf python3-crcmod).
"""
import json
import struct
import sys

try:
    import crcmod.predefined
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
except ImportError as error:
    print(f"read_tfevents.py: {error} (install python3-protobuf python3-crcmod)", file=sys.stderr)
    sys.exit(2)

CRC32C = crcmod.predefined.mkCrcFun("crc-32c")


def masked(data):
    crc = CRC32C(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def event_class():
    """tensorflow.Event with Summary and Summary.Value, as in TensorBoard's schema."""
    F = descriptor_pb2.FieldDescriptorProto
    proto = descriptor_pb2.FileDescriptorProto(name="event_subset.proto", package="tensorflow", syntax="proto3")
    summary = proto.message_type.add(name="Summary")
    value = summary.nested_type.add(name="Value")
    value.field.add(name="tag", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    value.field.add(name="simple_value", number=2, type=F.TYPE_FLOAT, label=F.LABEL_OPTIONAL, oneof_index=0)
    value.oneof_decl.add(name="value")
    summary.field.add(name="value", number=1, type=F.TYPE_MESSAGE, label=F.LABEL_REPEATED,
                      type_name=".tensorflow.Summary.Value")
    event = proto.message_type.add(name="Event")
    event.field.add(name="wall_time", number=1, type=F.TYPE_DOUBLE, label=F.LABEL_OPTIONAL)
    event.field.add(name="step", number=2, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
    event.field.add(name="file_version", number=3, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL, oneof_index=0)
    event.field.add(name="summary", number=5, type=F.TYPE_MESSAGE, label=F.LABEL_OPTIONAL, oneof_index=0,
                    type_name=".tensorflow.Summary")
    event.oneof_decl.add(name="what")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    descriptor = pool.FindMessageTypeByName("tensorflow.Event")
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(descriptor)
    return message_factory.MessageFactory(pool).GetPrototype(descriptor)


def read(path, Event):
    data = open(path, "rb").read()
    offset = 0
    while offset < len(data):
        if offset + 12 > len(data):
            sys.exit(f"{path}:{offset}: a frame's header is cut short")
        header = data[offset:offset + 8]
        (length,) = struct.unpack("<Q", header)
        (length_crc,) = struct.unpack("<I", data[offset + 8:offset + 12])
        if masked(header) != length_crc:
            sys.exit(f"{path}:{offset}: the length's CRC is wrong")
        body = data[offset + 12:offset + 12 + length]
        if len(body) != length or offset + 16 + length > len(data):
            sys.exit(f"{path}:{offset}: the record is cut short")
        (body_crc,) = struct.unpack("<I", data[offset + 12 + length:offset + 16 + length])
        if masked(body) != body_crc:
            sys.exit(f"{path}:{offset}: the data's CRC is wrong")
        event = Event()
        event.ParseFromString(body)
        entry = {"wall_time": event.wall_time, "step": event.step,
                 "scalars": {v.tag: v.simple_value for v in event.summary.value}}
        if event.file_version:
            entry["file_version"] = event.file_version
        print(json.dumps(entry))
        offset += 16 + length


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    Event = event_class()
    for path in sys.argv[1:]:
        read(path, Event)


if __name__ == "__main__":
    main()

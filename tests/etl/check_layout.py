#!/usr/bin/env python3
"""Walks .etl files field by field, with no code shared with etwrt's writer.

Every buffer: its WMI_BUFFER_HEADER (0x48 bytes), its records one by one (each an 8-aligned
record whose marker names its header type, whose size stays inside the buffer's Offset), the
gap between records, and 0xFF from Offset to the buffer's end. The first buffer: the log-file
header event (SYSTEM_TRACE_HEADER + TRACE_LOGFILE_HEADER, x64) with LoggerName and
LogFileName as trailing UTF-16 strings. EVENT_HEADER records: their extended items, chained by
their linkage bit, inside the record. Facts from the SDK's structures and phnt's ntwmi.h; the
same walk is run on files Windows wrote (../shared/etl-corpus) to prove it. Layout 2.0 files
(VersionDetail 2.0: relogged, merged or compressed) have buffers of their own sizes; a compressed
buffer (ETW_BUFFER_FLAG_COMPRESSED) holds MS-XCA plain LZ77 data after its header, BufferSize
its bytes on disk: it is decompressed here (MS-XCA 2.4.4, written from the specification) to
its Offset and its records walked as any others.

    check_layout.py FILE [--expect JSON] [--records N]

--expect: a JSON object of what a file etwrt wrote must hold (every key optional):
  logger_name, log_file_name, buffer_size, log_file_mode, maximum_file_size, clock,
  events (EVENT_HEADER and classic records outside the header buffer), events_lost,
  buffers_lost, buffers_written, provider (GUID string: every event's), user_data_size,
  strict (bool: the gap between records is zeros, CurrentOffset == SavedOffset == Offset,
  every timestamp between StartTime's and EndTime's stamps),
  events_by_processor (object: processor number -> the events of the buffers of that processor,
  ProcessorIndex when the buffer says PROC_INDEX, else ProcessorNumber),
  ordered_buffers (bool: within each buffer, the records' timestamps never go back).
--records N: the file holds N records in all (header event included), as SOURCES.md states.
Prints a JSON summary; exit 0 when every check holds, 1 with one line per failure, 2 for
bad usage or a file that cannot be read.
"""
import argparse
import json
import struct
import sys
import uuid

BUFFER_HEADER = 0x48
SYSTEM_HEADER = 0x20
LOGFILE_HEADER = 0x118
EVENT_HEADER = 0x50
FULL_HEADER = 0x30
# TRACE_HEADER_TYPE_*: where each header keeps its size, and its fixed length.
SIZE_AT_4 = {1: 0x20, 2: 0x20, 3: 0x18, 4: 0x18, 16: 0x10, 17: 0x10}  # system, compact, perfinfo
SIZE_AT_0 = {10: 0x30, 11: 0x48, 15: 0x08, 18: 0x50, 19: 0x50, 20: 0x30, 21: 0x48}
BUFFER_FLAG_COMPRESSED = 0x40
EXT_TYPES = set(range(1, 0x12))  # EVENT_HEADER_EXT_TYPE_RELATED_ACTIVITYID .. the documented ones


def xpress_lz77(src, out_size):
    """MS-XCA 2.4.4's plain LZ77 decompression of `src` into exactly `out_size` bytes."""
    out = bytearray()
    ip, n, half, flags, count = 0, len(src), None, 0, 0
    while True:
        if count == 0:
            if n - ip < 4:
                if ip != n:
                    raise ValueError(f"a flag word cut short at {ip}")
                break
            flags, ip, count = int.from_bytes(src[ip:ip + 4], "little"), ip + 4, 32
        count -= 1
        if ip == n:
            break
        if not (flags >> count) & 1:
            out.append(src[ip])
            ip += 1
            continue
        if n - ip < 2:
            raise ValueError(f"a match cut short at {ip}")
        match, ip = src[ip] | src[ip + 1] << 8, ip + 2
        length, offset = match & 7, (match >> 3) + 1
        if length == 7:
            if half is None:
                if ip == n:
                    raise ValueError("a length cut short")
                half, length, ip = ip, src[ip] & 15, ip + 1
            else:
                half, length = None, src[half] >> 4
            if length == 15:
                if ip == n:
                    raise ValueError("a length cut short")
                length, ip = src[ip], ip + 1
                if length == 255:
                    if n - ip < 2:
                        raise ValueError("a length cut short")
                    length, ip = src[ip] | src[ip + 1] << 8, ip + 2
                    if length == 0:
                        if n - ip < 4:
                            raise ValueError("a length cut short")
                        length, ip = int.from_bytes(src[ip:ip + 4], "little"), ip + 4
                    if length < 22:
                        raise ValueError(f"length {length} under 22")
                    length -= 22
                length += 15
            length += 7
        length += 3
        if offset > len(out) or len(out) + length > out_size:
            raise ValueError(f"a match (offset {offset}, length {length}) outside the output")
        start = len(out) - offset
        if offset >= length:
            out += out[start:start + length]
        else:  # Overlapping: the last `offset` bytes repeat.
            out += (bytes(out[start:]) * (length // offset + 1))[:length]
    if len(out) != out_size:
        raise ValueError(f"{len(out)} bytes, not {out_size}")
    return bytes(out)


class Checker:
    def __init__(self, data, expect):
        self.d = data
        self.expect = expect or {}
        self.strict = bool(self.expect.get("strict"))
        self.failures = []
        self.summary = {"buffers": 0, "records": 0, "events": 0, "classic": 0,
                        "system": 0, "other": 0, "extended_items": 0, "compressed_buffers": 0,
                        "events_by_processor": {}}
        self.processor = 0  # the buffer being walked's
        self.last_stamp = None  # its last record's timestamp

    def fail(self, where, what):
        self.failures.append(f"{where}: {what}")

    def u16(self, o):
        return struct.unpack_from("<H", self.d, o)[0]

    def u32(self, o):
        return struct.unpack_from("<I", self.d, o)[0]

    def i64(self, o):
        return struct.unpack_from("<q", self.d, o)[0]

    def run(self):
        if len(self.d) < BUFFER_HEADER + SYSTEM_HEADER + LOGFILE_HEADER:
            self.fail("file", f"{len(self.d)} bytes: not even a header buffer")
            return
        self.buffer_size = self.u32(0)
        version = bytes(self.d[BUFFER_HEADER + SYSTEM_HEADER + 4:BUFFER_HEADER + SYSTEM_HEADER + 8])
        # Layout 2.0: each buffer its own size, the header buffer's not the logger's BufferSize,
        # and (as Windows' relogger writes it: SelfDescribingSingleEvent.etl, 0x1b8 of 0x208)
        # a header buffer's SavedOffset short of its Offset.
        self.layout2 = version[2:4] == bytes([2, 0])
        if self.layout2:
            self.header = self.logfile_header()
            pos, index = 0, 0
            while pos < len(self.d):
                size = self.u32(pos) if len(self.d) - pos >= BUFFER_HEADER else 0
                if size < BUFFER_HEADER or size > len(self.d) - pos:
                    self.fail(f"buffer {index} @{pos:#x}", f"BufferSize {size} does not fit the file")
                    return
                self.buffer(index, pos, size)
                pos, index = pos + size, index + 1
            self.compare_totals()
            return
        if self.buffer_size < 0x400 or len(self.d) % self.buffer_size != 0:
            self.fail("file", f"size {len(self.d)} is not a multiple of BufferSize {self.buffer_size}")
            return
        self.header = self.logfile_header()
        for index in range(len(self.d) // self.buffer_size):
            self.buffer(index, index * self.buffer_size, self.buffer_size)
        self.compare_totals()

    def logfile_header(self):
        e = BUFFER_HEADER
        where = "header event"
        if self.d[e + 2] != 2 or self.d[e + 3] != 0xC0 or self.u16(e) != 2:
            self.fail(where, f"marker {self.u32(e):#010x}, not a SYSTEM64 header (0xC0020002)")
        if self.u16(e + 6) != 0:
            self.fail(where, f"HookId {self.u16(e + 6):#x}, not the log-file header's 0")
        h = e + SYSTEM_HEADER
        f = {
            "BufferSize": self.u32(h), "Version": bytes(self.d[h + 4:h + 8]),
            "ProviderVersion": self.u32(h + 8), "NumberOfProcessors": self.u32(h + 0x0C),
            "EndTime": self.i64(h + 0x10), "TimerResolution": self.u32(h + 0x18),
            "MaximumFileSize": self.u32(h + 0x1C), "LogFileMode": self.u32(h + 0x20),
            "BuffersWritten": self.u32(h + 0x24), "StartBuffers": self.u32(h + 0x28),
            "PointerSize": self.u32(h + 0x2C), "EventsLost": self.u32(h + 0x30),
            "CpuSpeedInMHz": self.u32(h + 0x34), "TimeZoneBias": struct.unpack_from("<i", self.d, h + 0x48)[0],
            "BootTime": self.i64(h + 0xF8), "PerfFreq": self.i64(h + 0x100),
            "StartTime": self.i64(h + 0x108), "ReservedFlags": self.u32(h + 0x110),
            "BuffersLost": self.u32(h + 0x114), "SystemTime": self.i64(e + 16),
        }
        size = self.u16(e + 4)
        names = self.d[h + LOGFILE_HEADER:e + size]
        parts = bytes(names).decode("utf-16-le", errors="replace").split("\0")
        if len(parts) < 3 or len(names) % 2 != 0:
            self.fail(where, "LoggerName and LogFileName are not two NUL-terminated UTF-16 strings")
            parts = ["", "", ""]
        f["LoggerName"], f["LogFileName"] = parts[0], parts[1]
        for zone_name in (h + 0x48 + 4, h + 0x48 + 4 + 84):  # StandardName, DaylightName
            units = struct.unpack_from("<32H", self.d, zone_name)
            if 0 not in units:
                self.fail(where, "a TimeZone name is not NUL-terminated in its 32 WCHARs")
        if f["BufferSize"] != self.buffer_size and not self.layout2:
            self.fail(where, f"BufferSize {f['BufferSize']} != the buffers' {self.buffer_size}")
        if f["PointerSize"] not in (4, 8):
            self.fail(where, f"PointerSize {f['PointerSize']}")
        if f["NumberOfProcessors"] == 0 or f["PerfFreq"] <= 0 or f["TimerResolution"] == 0:
            self.fail(where, "NumberOfProcessors, PerfFreq and TimerResolution must be positive")
        if f["ReservedFlags"] not in (0, 1, 2, 3):
            self.fail(where, f"ReservedFlags (the clock) {f['ReservedFlags']}")
        if f["EndTime"] != 0 and f["EndTime"] < f["StartTime"]:
            self.fail(where, f"EndTime {f['EndTime']} before StartTime {f['StartTime']}")
        if f["BootTime"] > f["StartTime"]:
            self.fail(where, "BootTime after StartTime")
        self.summary["header"] = {k: (v.hex() if isinstance(v, bytes) else v) for k, v in f.items()}
        return f

    def buffer(self, index, b, expected_size):
        where = f"buffer {index} @{b:#x}"
        d = self.d
        bs, saved, current = self.u32(b), self.u32(b + 4), self.u32(b + 8)
        processor, logger = self.u16(b + 0x28), self.u16(b + 0x2A)
        state, offset = self.u32(b + 0x2C), self.u32(b + 0x30)
        flag, kind = self.u16(b + 0x34), self.u16(b + 0x36)
        self.summary["buffers"] += 1
        self.processor = processor if flag & 0x20 else processor & 0xFF
        self.last_stamp = None
        if bs != expected_size:
            self.fail(where, f"BufferSize {bs} != {expected_size}")
            return
        if flag & BUFFER_FLAG_COMPRESSED:
            self.summary["compressed_buffers"] += 1
            self.compressed(b, bs, offset, where, index)
            return
        if not BUFFER_HEADER <= offset <= bs:
            self.fail(where, f"Offset {offset:#x} outside {BUFFER_HEADER:#x}..{bs:#x}")
            return
        if kind not in range(0, 8):
            self.fail(where, f"BufferType {kind}")
        if (index == 0) != (kind == 4):
            self.fail(where, f"BufferType {kind}: the first buffer, and only it, is the header (4)")
        if (saved not in (0, offset) or (saved == 0 and index != 0)) and not self.layout2:
            self.fail(where, f"SavedOffset {saved:#x} != Offset {offset:#x}")
        if flag & 0x20 == 0 and processor & 0xFF >= self.header["NumberOfProcessors"]:
            self.fail(where, f"ProcessorNumber {processor & 0xFF} >= NumberOfProcessors")
        if self.strict:
            if current != offset or saved != offset or state != 3:
                self.fail(where, f"CurrentOffset {current:#x}, SavedOffset {saved:#x}, State {state}")
            if flag & 0x20 and processor >= self.header["NumberOfProcessors"]:
                self.fail(where, f"ProcessorIndex {processor} >= NumberOfProcessors")
            if bytes(d[b + 0x38:b + 0x48]) != bytes(16) or bytes(d[b + 0x20:b + 0x28]) != bytes(8):
                self.fail(where, "reserved fields of the buffer header are not zero")
        padding = bytes(d[b + offset:b + bs])
        if padding != b"\xff" * len(padding):
            at = next(i for i, c in enumerate(padding) if c != 0xFF)
            self.fail(where, f"byte {offset + at:#x} past Offset is {padding[at]:#04x}, not 0xFF")
        self.records(b, offset, where, index)

    def compressed(self, b, size, offset, where, index):
        if not BUFFER_HEADER <= offset <= self.header["BufferSize"]:
            self.fail(where, f"Offset {offset:#x} outside {BUFFER_HEADER:#x}..BufferSize")
            return
        try:
            data = xpress_lz77(self.d[b + BUFFER_HEADER:b + size], offset - BUFFER_HEADER)
        except ValueError as error:
            self.fail(where, f"compressed data: {error}")
            return
        whole, self.d = self.d, memoryview(bytes(self.d[b:b + BUFFER_HEADER]) + data)
        try:
            self.records(0, offset, where, index)
        finally:
            self.d = whole

    def records(self, b, end, where, index):
        o = b + BUFFER_HEADER
        first = True
        while o < b + end:
            rel = o - b
            if rel % 8 != 0:
                self.fail(where, f"record at {rel:#x} is not 8-aligned")
                return
            kind, marker = self.d[o + 2], self.d[o + 3]
            if marker & 0x80 == 0:
                self.fail(where, f"record at {rel:#x}: marker {self.u32(o):#010x} lacks TRACE_HEADER_FLAG")
                return
            if kind in SIZE_AT_4:
                size, fixed = self.u16(o + 4), SIZE_AT_4[kind]
            elif kind in SIZE_AT_0:
                size, fixed = self.u16(o), SIZE_AT_0[kind]
            else:
                self.fail(where, f"record at {rel:#x}: unknown header type {kind}")
                return
            if size < fixed or rel + size > end:
                self.fail(where, f"record at {rel:#x}: Size {size} (header {fixed}, Offset {end:#x})")
                return
            self.summary["records"] += 1
            self.record(o, kind, size, f"{where} record at {rel:#x}", index == 0 and first)
            gap = bytes(self.d[o + size:o + ((size + 7) & ~7)])
            if self.strict and gap != bytes(len(gap)):
                self.fail(where, f"record at {rel:#x}: the gap after it is {gap.hex()}, not zeros")
            o += (size + 7) & ~7
            first = False
        if o != b + end:
            self.fail(where, f"records end at {o - b:#x}, past Offset {end:#x}")

    def record(self, o, kind, size, where, is_header_event):
        if is_header_event:
            if kind != 2:
                self.fail(where, "the first record of the file is not the log-file header event")
            self.summary["system"] += 1
            return
        if kind in (18, 19, 10, 20):
            by = self.summary["events_by_processor"]
            by[str(self.processor)] = by.get(str(self.processor), 0) + 1
            t = self.i64(o + 16)
            if self.expect.get("ordered_buffers") and self.last_stamp is not None and t < self.last_stamp:
                self.fail(where, f"TimeStamp {t} before the buffer's previous record's {self.last_stamp}")
            self.last_stamp = t
        if kind in (18, 19):
            self.summary["events"] += 1
            self.event(o, size, where)
        elif kind in (10, 20):
            self.summary["classic"] += 1
            self.stamped(o + 16, where)
            self.same_provider(o + 24, where)
        elif kind in (1, 2, 3, 4, 16, 17):
            self.summary["system"] += 1
        else:
            self.summary["other"] += 1

    def event(self, o, size, where):
        flags = self.u16(o + 4)
        self.stamped(o + 16, where)
        self.same_provider(o + 24, where)
        at = EVENT_HEADER
        if flags & 0x0001:  # EVENT_HEADER_FLAG_EXTENDED_INFO: items until linkage 0
            while True:
                if at + 8 > size:
                    self.fail(where, f"extended item header at +{at:#x} past Size {size}")
                    return
                item_size, ext, linkage, data = (self.u16(o + at + k) for k in (0, 2, 4, 6))
                if ext not in EXT_TYPES or item_size != 8 + ((data + 7) & ~7) or at + item_size > size:
                    self.fail(where, f"extended item at +{at:#x}: size {item_size}, type {ext}, data {data}")
                    return
                self.summary["extended_items"] += 1
                at += item_size
                if linkage & 1 == 0:
                    break
        want = self.expect.get("user_data_size")
        if want is not None and size - at != want:
            self.fail(where, f"user data {size - at} bytes, expected {want}")

    def stamped(self, at, where):
        if not self.strict:
            return
        t, h = self.i64(at), self.header
        end = h["EndTime"]
        start = h["SystemTime"]
        if t < start:
            self.fail(where, f"TimeStamp {t} before the header's {start}")
        if end and h["ReservedFlags"] == 2 and t > end:
            self.fail(where, f"TimeStamp {t} after EndTime {end}")

    def same_provider(self, at, where):
        want = self.expect.get("provider")
        if want is not None:
            got = str(uuid.UUID(bytes_le=bytes(self.d[at:at + 16])))
            if got != want.lower():
                self.fail(where, f"provider {got}, expected {want}")

    def compare_totals(self):
        h, e, s = self.header, self.expect, self.summary
        pairs = [("logger_name", "LoggerName"), ("log_file_name", "LogFileName"),
                 ("log_file_mode", "LogFileMode"), ("maximum_file_size", "MaximumFileSize"),
                 ("clock", "ReservedFlags"), ("events_lost", "EventsLost"),
                 ("buffers_lost", "BuffersLost"), ("buffers_written", "BuffersWritten")]
        for key, field in pairs:
            if key in e and e[key] != h[field]:
                self.fail("header", f"{field} {h[field]!r}, expected {e[key]!r}")
        if "buffer_size" in e and e["buffer_size"] != h["BufferSize"]:
            self.fail("header", f"BufferSize {h['BufferSize']}, expected {e['buffer_size']}")
        if "events_by_processor" in e and e["events_by_processor"] != s["events_by_processor"]:
            self.fail("file", f"events by processor {s['events_by_processor']}, expected "
                      f"{e['events_by_processor']}")
        if "events" in e and e["events"] != s["events"] + s["classic"]:
            self.fail("file", f"{s['events'] + s['classic']} events, expected {e['events']}")
        if self.strict:
            if h["BuffersWritten"] != s["buffers"]:
                self.fail("header", f"BuffersWritten {h['BuffersWritten']} != {s['buffers']} buffers")
            if h["EndTime"] == 0:
                self.fail("header", "EndTime 0: the header was not finalised")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file")
    parser.add_argument("--expect", help="JSON object of expected values")
    parser.add_argument("--records", type=int, help="records in the file, header event included")
    args = parser.parse_args()
    try:
        data = memoryview(open(args.file, "rb").read())
        expect = json.loads(args.expect) if args.expect else {}
    except (OSError, ValueError) as error:
        print(f"check_layout: {error}", file=sys.stderr)
        return 2
    checker = Checker(data, expect)
    checker.run()
    s = checker.summary
    if args.records is not None and s["records"] != args.records:
        checker.fail("file", f"{s['records']} records, expected {args.records}")
    print(json.dumps({"file": args.file, **s}))
    for failure in checker.failures[:20]:
        print(f"{args.file}: {failure}", file=sys.stderr)
    if len(checker.failures) > 20:
        print(f"{args.file}: ... {len(checker.failures) - 20} more", file=sys.stderr)
    return 1 if checker.failures else 0


if __name__ == "__main__":
    sys.exit(main())

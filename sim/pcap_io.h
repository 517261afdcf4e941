/* SPDX-License-Identifier: Apache-2.0 */
// Captures in and out, through libpcap: Ethernet (DLT_EN10MB) pcap or pcapng in, pcap with
// nanosecond timestamps out; and the rules every record obeys before it enters the pipeline,
// whether it comes from a capture or from a live interface (live_interface.h).
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

struct pcap;
struct pcap_dumper;

namespace matcha {

// Snapshot length of the captures written: room for the largest frame any configuration
// accepts, with margin.
constexpr int kSnapLen = 262144;

struct InputError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Frame {
    unsigned port;        // ingress port
    uint32_t packet;      // packet number in its capture (or on its port, live), from 1
    uint64_t time_ns;     // capture timestamp
    bool padded;          // captured shorter than the Ethernet minimum, zero-padded to it
    std::vector<uint8_t> bytes;
};

// Why a record of a capture does not enter the pipeline; the first that applies.
enum class SkipReason {
    Snaplen,   // captured shorter than it was on the wire (the capture's snapshot length)
    Empty,     // no bytes at all
    Oversize,  // longer than the pipeline's maximum frame
};
const char* skip_reason_name(SkipReason r);

struct SkippedRecord {
    unsigned port;
    uint32_t packet;      // as in Frame
    SkipReason reason;
    uint32_t captured_bytes, wire_bytes;
};

// What the simulator does with the records of a capture before they enter the pipeline.
struct InputRules {
    size_t max_bytes;     // longer records are skipped as Oversize
    size_t pad_to;        // shorter frames are zero-padded to this length; 0: never
};

// Why a record of `captured` bytes, of a frame of `wire` bytes, cannot enter the pipeline;
// nothing when it can.
std::optional<SkipReason> skip_reason(uint32_t captured, uint32_t wire, const InputRules& rules);

// The frame a record that may enter becomes: its bytes, zero-padded as `rules` say.
Frame admit(unsigned port, uint32_t packet, uint64_t time_ns, const uint8_t* data,
            uint32_t captured, const InputRules& rules);

// Appends every packet of `path` to `frames` as entering on `port`, padded as `rules`
// say, and every record that cannot enter the pipeline to `skipped`. Refuses (InputError
// naming the file and packet) a file libpcap cannot read, a link type other than
// Ethernet, and a damaged or cut-off record (saying how many packets were read whole).
void read_capture(const std::string& path, unsigned port, const InputRules& rules,
                  std::vector<Frame>& frames, std::vector<SkippedRecord>& skipped);

class CaptureWriter {
  public:
    // Creates (or truncates) `path`; throws InputError when it cannot.
    explicit CaptureWriter(const std::string& path);
    ~CaptureWriter();
    CaptureWriter(const CaptureWriter&) = delete;
    CaptureWriter& operator=(const CaptureWriter&) = delete;

    void write(uint64_t time_ns, const std::vector<uint8_t>& bytes);
    void flush();
    const std::string& path() const { return path_; }

  private:
    std::string path_;
    pcap* dead_ = nullptr;
    pcap_dumper* dumper_ = nullptr;
};

}  // namespace matcha

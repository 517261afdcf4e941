// Captures in and out, through libpcap: Ethernet (DLT_EN10MB) pcap or pcapng in, pcap with
// nanosecond timestamps out.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

struct pcap;
struct pcap_dumper;

namespace matcha {

struct InputError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Frame {
    unsigned port;        // ingress port
    uint32_t packet;      // packet number in its capture, from 1 (as Wireshark counts)
    uint64_t time_ns;     // capture timestamp
    std::vector<uint8_t> bytes;
};

// Appends every packet of `path` to `frames` as entering on `port`. Refuses (InputError
// naming the file and packet) a file libpcap cannot read, a link type other than
// Ethernet, a damaged or cut-off record, a packet captured shorter than it was on the
// wire, an empty packet and one longer than `max_bytes`.
void read_capture(const std::string& path, unsigned port, size_t max_bytes,
                  std::vector<Frame>& frames);

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

/* SPDX-License-Identifier: Apache-2.0 */
// A port of the simulator on a Linux network interface (veth, TAP, or any Ethernet
// interface): the frames the interface receives are captured as they arrive and frames are
// sent on it, through libpcap (sim/README.md, "Live: ports on Linux interfaces").
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

struct pcap;

namespace matcha {

// An interface that fails while the simulation runs (removed, taken down).
struct InterfaceError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class LiveInterface {
  public:
    // Opens interface `name` (promiscuous, every frame delivered as soon as it arrives,
    // nanosecond timestamps) for the frames it receives, not those sent on it, capturing at
    // most `snaplen` bytes of each. `what` names it in messages ("--interface 0@veth0").
    // Throws InputError (pcap_io.h) naming it when libpcap cannot open it: no such
    // interface, no permission, not Ethernet.
    LiveInterface(std::string what, const std::string& name, int snaplen);
    ~LiveInterface();
    LiveInterface(const LiveInterface&) = delete;
    LiveInterface& operator=(const LiveInterface&) = delete;

    // A frame as captured: its timestamp, the bytes captured and the frame's length.
    using Handler = std::function<void(uint64_t time_ns, const uint8_t* data,
                                       uint32_t captured, uint32_t wire)>;
    // Hands at most `max` frames that have arrived to `on_frame`, without waiting; returns
    // how many. Throws InterfaceError when the capture fails.
    int receive(int max, const Handler& on_frame);
    // Sends `frame` whole; libpcap's message when it could not.
    std::optional<std::string> send(const std::vector<uint8_t>& frame);
    // Frames the kernel dropped because the capture buffer was full, since the start.
    uint64_t kernel_dropped();

    const std::string& name() const { return name_; }

  private:
    std::string what_, name_;
    pcap* p_ = nullptr;
};

}  // namespace matcha

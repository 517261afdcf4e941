// SPDX-License-Identifier: Apache-2.0
#include "live_interface.h"

#include <pcap/pcap.h>

#include "pcap_io.h"

namespace matcha {

namespace {

// The kernel's capture buffer: where a burst waits while the simulator, slower than any
// link, works through it (about 850 frames of the largest size, thousands of small ones).
// In immediate mode libpcap cuts it into slots of the snapshot length.
constexpr int kBufferBytes = 8 << 20;

struct Dispatch {
    const LiveInterface::Handler* on_frame;
};

void on_packet(u_char* user, const pcap_pkthdr* h, const u_char* data) {
    const Dispatch& d = *reinterpret_cast<const Dispatch*>(user);
    // With nanosecond precision the "usec" field holds nanoseconds.
    (*d.on_frame)(uint64_t(h->ts.tv_sec) * 1000000000ull + uint64_t(h->ts.tv_usec), data,
                  h->caplen, h->len);
}

}  // namespace

LiveInterface::LiveInterface(std::string what, const std::string& name, int snaplen)
    : what_(std::move(what)), name_(name) {
    char err[PCAP_ERRBUF_SIZE] = "";
    p_ = pcap_create(name.c_str(), err);
    if (!p_) throw InputError(what_ + ": " + err);
    auto fail = [&](const std::string& msg) {
        pcap_close(p_);
        p_ = nullptr;
        throw InputError(what_ + ": " + msg);
    };
    // Immediate mode: a frame is handed over as it arrives, not when a buffer block fills
    // or times out (the pipeline sees it within a few clocks of its arrival).
    if (pcap_set_snaplen(p_, snaplen) || pcap_set_buffer_size(p_, kBufferBytes) ||
        pcap_set_promisc(p_, 1) || pcap_set_immediate_mode(p_, 1) ||
        pcap_set_tstamp_precision(p_, PCAP_TSTAMP_PRECISION_NANO))
        fail("cannot set up the capture");
    int rc = pcap_activate(p_);
    if (rc < 0) {
        // PCAP_ERROR_NO_SUCH_DEVICE, PCAP_ERROR_PERM_DENIED, ...: libpcap's status text,
        // with its own message when it has one.
        std::string msg = pcap_statustostr(rc);
        std::string detail = pcap_geterr(p_);
        fail(detail.empty() || detail == msg ? msg : msg + " (" + detail + ")");
    }
    if (pcap_datalink(p_) != DLT_EN10MB) {
        const char* link = pcap_datalink_val_to_name(pcap_datalink(p_));
        fail(std::string("link type ") + (link ? link : "?") +
             ", the simulator takes Ethernet interfaces");
    }
    // Frames the simulator (or the kernel) sends on the interface are not frames it receives.
    if (pcap_setdirection(p_, PCAP_D_IN) != 0)
        fail(std::string("cannot capture only received frames: ") + pcap_geterr(p_));
    if (pcap_setnonblock(p_, 1, err) != 0) fail(err);
}

LiveInterface::~LiveInterface() {
    if (p_) pcap_close(p_);
}

int LiveInterface::receive(int max, const Handler& on_frame) {
    Dispatch d{&on_frame};
    int n = pcap_dispatch(p_, max, on_packet, reinterpret_cast<u_char*>(&d));
    if (n < 0) throw InterfaceError(what_ + ": capture failed: " + pcap_geterr(p_));
    return n;
}

std::optional<std::string> LiveInterface::send(const std::vector<uint8_t>& frame) {
    int n = pcap_inject(p_, frame.data(), frame.size());
    if (n == int(frame.size())) return std::nullopt;
    if (n < 0) return std::string(pcap_geterr(p_));
    return "sent " + std::to_string(n) + " of " + std::to_string(frame.size()) + " bytes";
}

uint64_t LiveInterface::kernel_dropped() {
    pcap_stat s{};
    if (pcap_stats(p_, &s) != 0) return 0;  // not on a live Linux capture, which always has them
    return s.ps_drop;
}

}  // namespace matcha

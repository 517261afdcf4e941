// SPDX-License-Identifier: Apache-2.0
#include "pcap_io.h"

#include <pcap/pcap.h>

namespace matcha {

namespace {

struct Reader {
    pcap_t* p = nullptr;
    ~Reader() {
        if (p) pcap_close(p);
    }
};

}  // namespace

const char* skip_reason_name(SkipReason r) {
    switch (r) {
        case SkipReason::Snaplen: return "snaplen";
        case SkipReason::Empty: return "empty";
        case SkipReason::Oversize: return "oversize";
    }
    return "?";
}

std::optional<SkipReason> skip_reason(uint32_t captured, uint32_t wire, const InputRules& rules) {
    if (captured < wire) return SkipReason::Snaplen;
    if (captured == 0) return SkipReason::Empty;
    if (captured > rules.max_bytes) return SkipReason::Oversize;
    return std::nullopt;
}

Frame admit(unsigned port, uint32_t packet, uint64_t time_ns, const uint8_t* data,
            uint32_t captured, const InputRules& rules) {
    Frame f;
    f.port = port;
    f.packet = packet;
    f.time_ns = time_ns;
    f.bytes.assign(data, data + captured);
    f.padded = f.bytes.size() < rules.pad_to;
    if (f.padded) f.bytes.resize(rules.pad_to, 0);
    return f;
}

void read_capture(const std::string& path, unsigned port, const InputRules& rules,
                  std::vector<Frame>& frames, std::vector<SkippedRecord>& skipped) {
    char err[PCAP_ERRBUF_SIZE] = "";
    Reader r;
    r.p = pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO,
                                                  err);
    if (!r.p) throw InputError(path + ": " + err);
    int link = pcap_datalink(r.p);
    if (link != DLT_EN10MB) {
        const char* name = pcap_datalink_val_to_name(link);
        throw InputError(path + ": link type " + (name ? name : std::to_string(link)) +
                         ", the simulator takes Ethernet (EN10MB) captures");
    }
    for (uint32_t n = 1;; n++) {
        pcap_pkthdr* hdr;
        const u_char* data;
        int rc = pcap_next_ex(r.p, &hdr, &data);
        if (rc == PCAP_ERROR_BREAK) break;  // end of the file
        // Nothing after a record libpcap cannot read can be trusted: the file is refused.
        if (rc != 1)
            throw InputError(path + ": packet " + std::to_string(n) + ": " + pcap_geterr(r.p) +
                             " (a damaged or cut-off file; packets read whole before it: " +
                             std::to_string(n - 1) + ")");
        // A bad record is one frame a capture could not give whole, not a reason to
        // refuse the others.
        const uint64_t time_ns =
            uint64_t(hdr->ts.tv_sec) * 1000000000ull + uint64_t(hdr->ts.tv_usec);
        if (auto why = skip_reason(hdr->caplen, hdr->len, rules))
            skipped.push_back({port, n, *why, hdr->caplen, hdr->len});
        else
            frames.push_back(admit(port, n, time_ns, data, hdr->caplen, rules));
    }
}

CaptureWriter::CaptureWriter(const std::string& path) : path_(path) {
    dead_ = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, kSnapLen,
                                                 PCAP_TSTAMP_PRECISION_NANO);
    if (!dead_) throw InputError(path + ": cannot set up a capture writer");
    dumper_ = pcap_dump_open(dead_, path.c_str());
    if (!dumper_) {
        std::string msg = path + ": " + pcap_geterr(dead_);
        pcap_close(dead_);
        dead_ = nullptr;
        throw InputError(msg);
    }
}

CaptureWriter::~CaptureWriter() {
    if (dumper_) pcap_dump_close(dumper_);
    if (dead_) pcap_close(dead_);
}

void CaptureWriter::write(uint64_t time_ns, const std::vector<uint8_t>& bytes) {
    pcap_pkthdr h{};
    h.ts.tv_sec = time_t(time_ns / 1000000000ull);
    // With nanosecond precision the "usec" field holds nanoseconds.
    h.ts.tv_usec = suseconds_t(time_ns % 1000000000ull);
    h.caplen = h.len = uint32_t(bytes.size());
    pcap_dump(reinterpret_cast<u_char*>(dumper_), &h, bytes.data());
}

void CaptureWriter::flush() { pcap_dump_flush(dumper_); }

}  // namespace matcha

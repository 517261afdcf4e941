#include "json.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace json {

const Value* Value::get(const std::string& key) const {
    if (kind != Object) return nullptr;
    auto it = members.find(key);
    return it == members.end() ? nullptr : &it->second;
}

namespace {

class Parser {
  public:
    explicit Parser(const std::string& s) : s_(s) {}

    Value document() {
        Value v = value(0);
        skip_space();
        if (pos_ != s_.size()) fail("text after the document");
        return v;
    }

  private:
    const std::string& s_;
    size_t pos_ = 0;
    static constexpr int kMaxDepth = 256;

    [[noreturn]] void fail(const std::string& what) const {
        size_t line = 1, col = 1;
        for (size_t i = 0; i < pos_ && i < s_.size(); i++) {
            if (s_[i] == '\n') {
                line++;
                col = 1;
            } else {
                col++;
            }
        }
        throw ParseError(what + " at line " + std::to_string(line) + ", column " +
                         std::to_string(col));
    }

    void skip_space() {
        while (pos_ < s_.size() &&
               (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
            pos_++;
    }

    char peek() {
        skip_space();
        if (pos_ >= s_.size()) fail("unexpected end of the document");
        return s_[pos_];
    }

    void expect(char c) {
        if (peek() != c) fail(std::string("expected '") + c + "'");
        pos_++;
    }

    bool literal(const char* word) {
        size_t n = std::char_traits<char>::length(word);
        if (s_.compare(pos_, n, word) != 0) return false;
        pos_ += n;
        return true;
    }

    Value value(int depth) {
        if (depth > kMaxDepth) fail("nesting too deep");
        Value v;
        char c = peek();
        if (c == '{') {
            v.kind = Value::Object;
            pos_++;
            if (peek() == '}') {
                pos_++;
                return v;
            }
            for (;;) {
                if (peek() != '"') fail("expected a member name");
                std::string key = string();
                expect(':');
                v.members[key] = value(depth + 1);
                if (peek() == ',') {
                    pos_++;
                    continue;
                }
                expect('}');
                return v;
            }
        }
        if (c == '[') {
            v.kind = Value::Array;
            pos_++;
            if (peek() == ']') {
                pos_++;
                return v;
            }
            for (;;) {
                v.items.push_back(value(depth + 1));
                if (peek() == ',') {
                    pos_++;
                    continue;
                }
                expect(']');
                return v;
            }
        }
        if (c == '"') {
            v.kind = Value::String;
            v.text = string();
            return v;
        }
        if (literal("true")) {
            v.kind = Value::Bool;
            v.boolean = true;
            return v;
        }
        if (literal("false")) {
            v.kind = Value::Bool;
            return v;
        }
        if (literal("null")) return v;
        return number();
    }

    Value number() {
        size_t start = pos_;
        if (pos_ < s_.size() && s_[pos_] == '-') pos_++;
        auto digits = [&] {
            size_t d = pos_;
            while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') pos_++;
            return pos_ - d;
        };
        if (digits() == 0) fail("expected a value");
        bool integral = true;
        if (pos_ < s_.size() && s_[pos_] == '.') {
            pos_++;
            integral = false;
            if (digits() == 0) fail("expected digits after '.'");
        }
        if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
            pos_++;
            integral = false;
            if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) pos_++;
            if (digits() == 0) fail("expected an exponent");
        }
        std::string text = s_.substr(start, pos_ - start);
        Value v;
        v.kind = Value::Number;
        v.number = std::strtod(text.c_str(), nullptr);
        if (integral) {
            // Out of the 64-bit range: integer stays 0, so is_int() is false.
            errno = 0;
            long long i = std::strtoll(text.c_str(), nullptr, 10);
            if (errno == 0) v.integer = i;
        } else if (std::trunc(v.number) == v.number && std::fabs(v.number) < 9.0e18) {
            v.integer = static_cast<int64_t>(v.number);
        }
        return v;
    }

    void utf8(std::string& out, uint32_t cp) {
        if (cp < 0x80) {
            out += char(cp);
        } else if (cp < 0x800) {
            out += char(0xC0 | (cp >> 6));
            out += char(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out += char(0xE0 | (cp >> 12));
            out += char(0x80 | ((cp >> 6) & 0x3F));
            out += char(0x80 | (cp & 0x3F));
        } else {
            out += char(0xF0 | (cp >> 18));
            out += char(0x80 | ((cp >> 12) & 0x3F));
            out += char(0x80 | ((cp >> 6) & 0x3F));
            out += char(0x80 | (cp & 0x3F));
        }
    }

    uint32_t hex4() {
        if (pos_ + 4 > s_.size()) fail("short \\u escape");
        uint32_t v = 0;
        for (int i = 0; i < 4; i++) {
            char c = s_[pos_++];
            v <<= 4;
            if (c >= '0' && c <= '9') v |= c - '0';
            else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
            else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
            else fail("bad \\u escape");
        }
        return v;
    }

    std::string string() {
        expect('"');
        std::string out;
        for (;;) {
            if (pos_ >= s_.size()) fail("unterminated string");
            char c = s_[pos_++];
            if (c == '"') return out;
            if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
            if (c != '\\') {
                out += c;
                continue;
            }
            if (pos_ >= s_.size()) fail("unterminated string");
            char e = s_[pos_++];
            switch (e) {
                case '"': out += '"'; break;
                case '\\': out += '\\'; break;
                case '/': out += '/'; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'n': out += '\n'; break;
                case 'r': out += '\r'; break;
                case 't': out += '\t'; break;
                case 'u': {
                    uint32_t cp = hex4();
                    if (cp >= 0xD800 && cp < 0xDC00 && literal("\\u")) {
                        uint32_t lo = hex4();
                        if (lo < 0xDC00 || lo >= 0xE000) fail("bad surrogate pair");
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    }
                    utf8(out, cp);
                    break;
                }
                default: fail("bad escape");
            }
        }
    }
};

}  // namespace

Value parse(const std::string& text) { return Parser(text).document(); }

}  // namespace json

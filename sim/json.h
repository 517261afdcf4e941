// A small JSON reader for layout.json: the whole grammar (RFC 8259), values kept as a tree.
// Numbers are kept as doubles and as 64-bit integers when they are integral.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace json {

struct Value {
    enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
    bool boolean = false;
    double number = 0;
    int64_t integer = 0;
    std::string text;
    std::vector<Value> items;
    std::map<std::string, Value> members;

    // The member `key` of an object, nullptr if absent or not an object.
    const Value* get(const std::string& key) const;
    bool is_int() const { return kind == Number && double(integer) == number; }
};

struct ParseError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Parses a whole document; throws ParseError naming the line and column of a problem.
Value parse(const std::string& text);

}  // namespace json

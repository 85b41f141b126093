// etwrt: the wide formatted output of the C library (wprintf, fwprintf, swprintf, vwprintf,
// vfwprintf, vswprintf) for code built with a 2-byte wchar_t (-fshort-wchar,
// etwrt::win32_abi). glibc's are compiled for its 4-byte wchar_t and misread a UTF-16 format;
// a program linked with etwrt::win32_abi has its own calls redirected here (ld --wrap, see
// runtime/CMakeLists.txt), as for wchar16.cc. The format has the meaning Microsoft's CRT gives
// it, since the code was written for that CRT (docs/etwrt/use.md, "Wide strings"): in a wide
// function %s and %c take wide text and %hs, %hc, %S, %C narrow text (%ls, %lc, %ws wide);
// the size prefixes are LLP64's (l is 32 bits; ll, I64, I, z, t, j are 64 bits; h, hh, I32);
// %p prints the pointer as 16 upper-case hex digits; %n is refused (the CRT's default). Text
// goes to a stream as UTF-8, the narrow text of Linux. Compiled with the library's 4-byte
// wchar_t: a unit is a char16_t here.
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "etwh/utf16.h"

namespace {

using Unit = char16_t;

// Narrow text (UTF-8, the narrow code page etwrt reads) to UTF-16; a byte that starts no valid
// sequence becomes U+FFFD, as a code page conversion would give its default character.
void append_narrow(std::u16string& out, const char* s, std::size_t n) {
  for (std::size_t i = 0; i < n;) {
    const unsigned char b = static_cast<unsigned char>(s[i]);
    const int extra = b < 0x80             ? 0
                      : (b & 0xE0) == 0xC0 ? 1
                      : (b & 0xF0) == 0xE0 ? 2
                      : (b & 0xF8) == 0xF0 ? 3
                                           : -1;
    char32_t c = extra == 0 ? b : extra == 1 ? b & 0x1F : extra == 2 ? b & 0x0F : b & 0x07;
    bool ok = extra >= 0 && i + extra < n;
    for (int k = 1; ok && k <= extra; ++k) {
      const unsigned char t = static_cast<unsigned char>(s[i + k]);
      ok = (t & 0xC0) == 0x80;
      c = (c << 6) | (t & 0x3F);
    }
    if (!ok || c > 0x10FFFF || etwh::utf16::is_surrogate(c)) {
      etwh::utf16::append_utf16(out, 0xFFFD);
      ++i;
      continue;
    }
    etwh::utf16::append_utf16(out, c);
    i += static_cast<std::size_t>(extra) + 1;
  }
}

// One conversion specification: %[flags][width][.precision][size]type.
struct Spec {
  std::string flags;
  int width = 0;
  int precision = -1;
  enum class Size { kDefault, kChar, kShort, kLong32, kLong64 } size = Size::kDefault;
  bool wide_prefix = false;  // l or w: wide text for %S and %C
  char type = 0;
};

class Formatter {
 public:
  Formatter(const Unit* format, va_list* args) : format_(format), args_(args) {}

  // The whole output, or false for a format the CRT refuses (an unknown type, %n).
  bool run(std::u16string& out) {
    for (const Unit* p = format_; *p != 0;) {
      if (*p != u'%') {
        out.push_back(*p++);
        continue;
      }
      if (p[1] == u'%') {
        out.push_back(u'%');
        p += 2;
        continue;
      }
      Spec spec;
      if (!parse(++p, spec) || !convert(spec, out)) return false;
    }
    return true;
  }

 private:
  static bool is_flag(Unit c) {
    return c == u'-' || c == u'+' || c == u' ' || c == u'#' || c == u'0';
  }

  int number(const Unit*& p) {
    if (*p == u'*') {
      ++p;
      return va_arg(*args_, int);
    }
    int n = 0;
    while (*p >= u'0' && *p <= u'9' && n < 100000) n = n * 10 + (*p++ - u'0');
    return n;
  }

  bool parse(const Unit*& p, Spec& spec) {
    while (is_flag(*p)) spec.flags.push_back(static_cast<char>(*p++));
    spec.width = number(p);
    if (spec.width < 0) {  // a negative * width is the - flag and its magnitude
      spec.flags.push_back('-');
      spec.width = -spec.width;
    }
    if (*p == u'.') {
      ++p;
      spec.precision = number(p);
      if (spec.precision < 0) spec.precision = -1;
    }
    parse_size(p, spec);
    if (*p == 0) return false;
    spec.type = static_cast<char>(*p > 0x7F ? '?' : *p);
    ++p;
    return true;
  }

  static void parse_size(const Unit*& p, Spec& spec) {
    using Size = Spec::Size;
    if (p[0] == u'h') {
      spec.size = p[1] == u'h' ? Size::kChar : Size::kShort;
      p += p[1] == u'h' ? 2 : 1;
    } else if (p[0] == u'l' && p[1] == u'l') {
      spec.size = Size::kLong64;
      p += 2;
    } else if (p[0] == u'l' || p[0] == u'w') {
      spec.size = Size::kLong32;
      spec.wide_prefix = true;
      ++p;
    } else if (p[0] == u'I' && p[1] == u'6' && p[2] == u'4') {
      spec.size = Size::kLong64;
      p += 3;
    } else if (p[0] == u'I' && p[1] == u'3' && p[2] == u'2') {
      spec.size = Size::kLong32;
      p += 3;
    } else if (p[0] == u'I' || p[0] == u'z' || p[0] == u't' || p[0] == u'j') {
      spec.size = Size::kLong64;
      ++p;
    } else if (p[0] == u'L') {  // long double is double in Microsoft's CRT
      ++p;
    }
  }

  // The narrow specification glibc's snprintf formats one value with.
  static std::string narrow_spec(const Spec& spec, const char* size, char type) {
    std::string s = "%" + spec.flags;
    if (spec.width > 0) s += std::to_string(spec.width);
    if (spec.precision >= 0) s += "." + std::to_string(spec.precision);
    return s + size + type;
  }

  template <typename T>
  static void append_formatted(std::u16string& out, const std::string& spec, T value) {
    char buffer[512];
    const int n = snprintf(buffer, sizeof buffer, spec.c_str(), value);
    if (n <= 0) return;
    if (static_cast<std::size_t>(n) < sizeof buffer) {
      append_narrow(out, buffer, static_cast<std::size_t>(n));
      return;
    }
    std::string wide_field(static_cast<std::size_t>(n) + 1, '\0');  // a width above 511
    snprintf(wide_field.data(), wide_field.size(), spec.c_str(), value);
    append_narrow(out, wide_field.data(), static_cast<std::size_t>(n));
  }

  void integer(const Spec& spec, std::u16string& out) {
    const bool is_signed = spec.type == 'd' || spec.type == 'i';
    const bool wide = spec.size == Spec::Size::kLong64;
    const long long v = wide ? va_arg(*args_, long long) : va_arg(*args_, int);
    long long value = v;
    if (spec.size == Spec::Size::kShort)
      value = is_signed ? static_cast<short>(v) : static_cast<unsigned short>(v);
    if (spec.size == Spec::Size::kChar)
      value = is_signed ? static_cast<signed char>(v) : static_cast<unsigned char>(v);
    if (!wide && !is_signed) value = static_cast<unsigned int>(value);
    append_formatted(out, narrow_spec(spec, "ll", spec.type), value);
  }

  // Text padded to the width in units (the - flag: on the right), cut at the precision.
  static void append_padded(const Spec& spec, std::u16string text, std::u16string& out) {
    if (spec.precision >= 0 && text.size() > static_cast<std::size_t>(spec.precision)) {
      text.resize(static_cast<std::size_t>(spec.precision));
    }
    const std::size_t pad =
        static_cast<std::size_t>(spec.width) > text.size() ? spec.width - text.size() : 0;
    const bool left = spec.flags.find('-') != std::string::npos;
    if (!left) out.append(pad, u' ');
    out += text;
    if (left) out.append(pad, u' ');
  }

  void text(const Spec& spec, std::u16string& out) {
    const bool wide = spec.type == 's' ? spec.size != Spec::Size::kShort : spec.wide_prefix;
    const void* arg = va_arg(*args_, const void*);
    std::u16string value;
    const std::size_t most =
        spec.precision >= 0 ? static_cast<std::size_t>(spec.precision) : std::string::npos;
    if (arg == nullptr) {
      value = u"(null)";  // as the CRT prints a NULL string
    } else if (wide) {
      const Unit* s = static_cast<const Unit*>(arg);
      for (std::size_t i = 0; i < most && s[i] != 0; ++i) value.push_back(s[i]);
    } else {
      const char* s = static_cast<const char*>(arg);
      std::size_t n = 0;
      while (n < most && s[n] != 0) ++n;
      append_narrow(value, s, n);
    }
    append_padded(spec, std::move(value), out);
  }

  void character(const Spec& spec, std::u16string& out) {
    const bool wide = spec.type == 'c' ? spec.size != Spec::Size::kShort : spec.wide_prefix;
    const int c = va_arg(*args_, int);
    std::u16string value;
    if (wide) {
      value.push_back(static_cast<Unit>(c));
    } else {
      const char narrow = static_cast<char>(c);
      append_narrow(value, &narrow, 1);
    }
    Spec unbounded = spec;
    unbounded.precision = -1;
    append_padded(unbounded, std::move(value), out);
  }

  bool convert(const Spec& spec, std::u16string& out) {
    switch (spec.type) {
      case 'd':
      case 'i':
      case 'u':
      case 'o':
      case 'x':
      case 'X': integer(spec, out); return true;
      case 'e':
      case 'E':
      case 'f':
      case 'F':
      case 'g':
      case 'G':
      case 'a':
      case 'A':
        append_formatted(out, narrow_spec(spec, "", spec.type), va_arg(*args_, double));
        return true;
      case 'p': {
        Spec p = spec;
        p.flags = "0";
        p.width = 16;
        p.precision = -1;
        append_formatted(out, narrow_spec(p, "ll", 'X'),
                         static_cast<unsigned long long>(
                             reinterpret_cast<std::uintptr_t>(va_arg(*args_, void*))));
        return true;
      }
      case 's':
      case 'S': text(spec, out); return true;
      case 'c':
      case 'C': character(spec, out); return true;
      default:  // %n (off in Microsoft's CRT), %Z, and what no CRT knows
        return false;
    }
  }

  const Unit* format_;
  va_list* args_;
};

// The formatted text, or false (errno EINVAL) for a NULL format or one the CRT refuses.
bool format(const Unit* fmt, va_list args, std::u16string& out) {
  if (fmt == nullptr) {
    errno = EINVAL;
    return false;
  }
  va_list copy;
  va_copy(copy, args);
  const bool ok = Formatter(fmt, &copy).run(out);
  va_end(copy);
  if (!ok) errno = EINVAL;
  return ok;
}

int write_to(FILE* stream, const std::u16string& text) {
  std::string utf8;
  for (std::size_t i = 0; i < text.size();) {
    const char32_t c = etwh::utf16::next_code_point(text, i);
    etwh::utf16::append_utf8(utf8, etwh::utf16::is_surrogate(c) ? 0xFFFD : c);
  }
  if (!utf8.empty() && fwrite(utf8.data(), 1, utf8.size(), stream) != utf8.size()) return -1;
  return static_cast<int>(text.size());
}

}  // namespace

extern "C" {

// The CRT's count: with no buffer and a count of 0, the units the output needs; output that
// does not fit (with its NUL): count - 1 units and the NUL written, -1 returned.
int __wrap_vswprintf(Unit* buffer, std::size_t count, const Unit* fmt, va_list args) {
  std::u16string text;
  if (!format(fmt, args, text)) {
    if (buffer != nullptr && count > 0) buffer[0] = 0;
    return -1;
  }
  if (buffer == nullptr) return count == 0 ? static_cast<int>(text.size()) : -1;
  if (count == 0) return -1;
  const bool fits = text.size() < count;
  const std::size_t n = fits ? text.size() : count - 1;
  text.copy(buffer, n);
  buffer[n] = 0;
  return fits ? static_cast<int>(n) : -1;
}

int __wrap_swprintf(Unit* buffer, std::size_t count, const Unit* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  const int n = __wrap_vswprintf(buffer, count, fmt, args);
  va_end(args);
  return n;
}

int __wrap_vfwprintf(FILE* stream, const Unit* fmt, va_list args) {
  std::u16string text;
  if (stream == nullptr || !format(fmt, args, text)) return -1;
  return write_to(stream, text);
}

int __wrap_fwprintf(FILE* stream, const Unit* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  const int n = __wrap_vfwprintf(stream, fmt, args);
  va_end(args);
  return n;
}

int __wrap_vwprintf(const Unit* fmt, va_list args) { return __wrap_vfwprintf(stdout, fmt, args); }

int __wrap_wprintf(const Unit* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  const int n = __wrap_vfwprintf(stdout, fmt, args);
  va_end(args);
  return n;
}

}  // extern "C"

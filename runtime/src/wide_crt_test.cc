// Code written for Windows, built as etwrt::win32_abi builds it (a 2-byte wchar_t), using the C
// library's wide-string functions, the CRT's *_s forms and std::wstring on L"..." text: each
// answer must be the one Windows gives. No test framework: GoogleTest's own objects, built for
// a 4-byte wchar_t, would be linked with this program's redirections. Prints each failed check
// and exits 1 if any failed.
#include <windows.h>

#include <errno.h>
#include <wchar.h>

#include <cstdio>
#include <string>

static_assert(sizeof(wchar_t) == 2, "built with etwrt::win32_abi's -fshort-wchar");

namespace {

int g_failed = 0;

void check(bool ok, const char* what) {
  if (!ok) {
    std::printf("FAILED: %s\n", what);
    ++g_failed;
  }
}

#define CHECK(expression) check((expression), #expression)

// Equal as UTF-16 units to the char16_t literal (what Windows holds for the same L"...").
bool units_are(const wchar_t* text, const char16_t* expected) {
  for (;; ++text, ++expected) {
    if (static_cast<char16_t>(*text) != *expected) return false;
    if (*expected == 0) return true;
  }
}

void c_functions() {
  const wchar_t* text = L"h\u00e9llo";
  CHECK(wcslen(text) == 5);
  CHECK(wcsnlen(text, 3) == 3);
  wchar_t buffer[32];
  CHECK(wcscpy(buffer, text) == buffer);
  CHECK(units_are(buffer, u"h\u00e9llo"));
  CHECK(wcscmp(buffer, text) == 0);
  CHECK(wcscat(buffer, L" world") == buffer);
  CHECK(units_are(buffer, u"h\u00e9llo world"));
  CHECK(wcsncmp(buffer, L"h\u00e9lp", 3) == 0);
  CHECK(wcscmp(L"a", L"b") < 0 && wcscmp(L"b", L"a") > 0);
  CHECK(wcschr(buffer, L'w') == buffer + 6);
  CHECK(wcsrchr(buffer, L'o') == buffer + 7);
  CHECK(wcsstr(buffer, L"wor") == buffer + 6);
  CHECK(wcsstr(buffer, L"xyz") == nullptr);
  wchar_t copy[32];
  CHECK(wmemcpy(copy, buffer, 12) == copy);
  CHECK(wmemcmp(copy, buffer, 12) == 0);
  CHECK(wmemchr(copy, L'd', 12) == copy + 10);
  CHECK(wmemset(copy, L'x', 3) == copy);
  CHECK(copy[0] == L'x' && copy[2] == L'x' && copy[3] == L'l');
  wchar_t truncated[8];
  CHECK(wcsncpy(truncated, L"ab", 4) == truncated);
  CHECK(truncated[1] == L'b' && truncated[2] == 0 && truncated[3] == 0);
}

void secure_functions() {
  wchar_t name[8];
  CHECK(wcscpy_s(name, L"session") == 0);
  CHECK(units_are(name, u"session"));
  CHECK(wcscpy_s(name, L"too long!") == ERANGE);
  CHECK(name[0] == 0);
  CHECK(wcscpy_s(name, L"ab") == 0);
  CHECK(wcscat_s(name, L"cd") == 0);
  CHECK(units_are(name, u"abcd"));
  CHECK(wcscat_s(name, L"efgh") == ERANGE);
  CHECK(wcsncpy_s(name, L"xyz123", 3) == 0);
  CHECK(units_are(name, u"xyz"));
  CHECK(wcsnlen_s(name, 8) == 3);
  CHECK(wcsnlen_s(nullptr, 8) == 0);
  CHECK(wcscpy_s(nullptr, 4, L"a") == EINVAL);
}

void standard_strings() {
  std::wstring s = L"abc";
  s += L"def";
  CHECK(s.size() == 6);
  CHECK(s.find(L"cd") == 2);
  CHECK(s.rfind(L'f') == 5);
  CHECK(s.substr(1, 3) == L"bcd");
  CHECK(units_are(s.c_str(), u"abcdef"));
  const wchar_t* raw = L"from a pointer \u20ac";
  std::wstring from_pointer(raw);  // char_traits<wchar_t>::length: wcslen.
  CHECK(from_pointer.size() == 16);
  CHECK(from_pointer.compare(L"from a pointer \u20ac") == 0);
  CHECK(from_pointer < std::wstring(L"g"));
  std::wstring longer(100, L'z');  // Beyond the short-string buffer.
  longer.replace(10, 5, L"-mid-");
  CHECK(longer.size() == 100 && longer.find(L"-mid-") == 10);
}

// swprintf / fwprintf / wprintf as Microsoft's CRT reads the format (code written for Windows
// relies on it): %s and %c wide in a wide function, %hs and %S narrow, l is 32 bits.
void formatted_output() {
  wchar_t out[64];
  const ULONG count = 4000000000u;
  CHECK(swprintf(out, 64, L"%ls|%s|%hs|%S", L"w\u00e9", L"ide", "n\u00e9", "arrow") == 15);
  CHECK(units_are(out, u"w\u00e9|ide|n\u00e9|arrow"));
  CHECK(swprintf(out, 64, L"%lu %d %I64u %llx %zu", count, -5, 1ull << 40, 0xABCull,
                 static_cast<size_t>(7)) > 0);
  CHECK(units_are(out, u"4000000000 -5 1099511627776 abc 7"));
  CHECK(swprintf(out, 64, L"[%5.2f][%-4s][%*ls][%08X][%c%hc]", 3.14159, L"ab", 3, L"z", 0xBEEFu,
                 L'\u00e9', 'x') > 0);
  CHECK(units_are(out, u"[ 3.14][ab  ][  z][0000BEEF][\u00e9x]"));
  static wchar_t wide_field[700];
  CHECK(swprintf(wide_field, 700, L"%600d|", 7) == 601);  // a field wider than 512
  CHECK(wide_field[598] == L' ' && wide_field[599] == L'7' && wide_field[600] == L'|');
  CHECK(swprintf(out, 64, L"%p", reinterpret_cast<void*>(0x1234)) == 16);
  CHECK(units_are(out, u"0000000000001234"));
  CHECK(swprintf(out, 64, L"%s %.2ls", static_cast<const wchar_t*>(nullptr), L"abc") > 0);
  CHECK(units_are(out, u"(null) ab"));
  wchar_t small[4];
  CHECK(swprintf(small, 4, L"%d", 12345) == -1);  // does not fit: cut, NUL-terminated
  CHECK(units_are(small, u"123"));
  int ignored = 0;
  CHECK(swprintf(out, 64, L"%n", &ignored) == -1);  // %n: off in the CRT
  FILE* file = std::tmpfile();
  CHECK(fwprintf(file, L"%s=%u\u20ac\n", L"caf\u00e9", 42u) == 9);
  std::rewind(file);
  char bytes[32] = {};
  CHECK(std::fread(bytes, 1, sizeof bytes - 1, file) == 12);
  CHECK(std::string(bytes) == "caf\xc3\xa9=42\xe2\x82\xac\n");  // UTF-8 on the stream
  std::fclose(file);
}

// FileTimeToSystemTime: UTC fields and the day of the week, as the page describes.
void file_times() {
  SYSTEMTIME st{};
  FILETIME ft{0, 0};
  CHECK(FileTimeToSystemTime(&ft, &st) && st.wYear == 1601 && st.wMonth == 1 && st.wDay == 1 &&
        st.wDayOfWeek == 1);
  const ULONGLONG leap_day = 125962560012340000ull;  // 2000-02-29 00:00:01.234
  ft.dwLowDateTime = static_cast<DWORD>(leap_day);
  ft.dwHighDateTime = static_cast<DWORD>(leap_day >> 32);
  CHECK(FileTimeToSystemTime(&ft, &st) && st.wYear == 2000 && st.wMonth == 2 && st.wDay == 29 &&
        st.wDayOfWeek == 2 && st.wHour == 0 && st.wSecond == 1 && st.wMilliseconds == 234);
  const ULONGLONG new_year = 133485408000000000ull - 1;  // 2023-12-31 23:59:59.999
  ft.dwLowDateTime = static_cast<DWORD>(new_year);
  ft.dwHighDateTime = static_cast<DWORD>(new_year >> 32);
  CHECK(FileTimeToSystemTime(&ft, &st) && st.wYear == 2023 && st.wMonth == 12 && st.wDay == 31 &&
        st.wDayOfWeek == 0 && st.wHour == 23 && st.wMinute == 59 && st.wMilliseconds == 999);
  ft.dwHighDateTime = 0x80000000u;
  SetLastError(ERROR_SUCCESS);
  CHECK(!FileTimeToSystemTime(&ft, &st) && GetLastError() == ERROR_INVALID_PARAMETER);
}

}  // namespace

int main() {
  c_functions();
  secure_functions();
  standard_strings();
  formatted_output();
  file_times();
  std::printf("%d failed\n", g_failed);
  return g_failed == 0 ? 0 : 1;
}

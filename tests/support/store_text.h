// Every key and attribute of a store as one text, for tests that search it for a secret.
#pragma once

#include <string>

#include "store/store.h"

namespace mvr::testing_support {

inline std::string StoreText(store::Store& s) {
  std::string out;
  store::ScanRequest req;
  req.limit = 1000;
  for (int page = 0; page < 1000; ++page) {
    Result<store::Page> p = s.Scan(req);
    if (!p.ok()) return out + "\n(scan failed: " + p.status().ToString() + ")";
    for (const store::Item& item : p->items) {
      out += item.key.partition + " " + item.key.sort;
      for (const auto& [name, value] : item.attributes)
        out += " " + name + "=" + value.DebugString();
      out += "\n";
    }
    if (p->next_cursor.empty()) break;
    req.cursor = p->next_cursor;
  }
  return out;
}

}  // namespace mvr::testing_support

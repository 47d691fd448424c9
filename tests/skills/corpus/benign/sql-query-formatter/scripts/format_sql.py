#!/usr/bin/env python3
import sys

import sqlparse

sql = sys.stdin.read()
print(sqlparse.format(sql, keyword_case="upper", identifier_case=None,
                      reindent=True, indent_width=4, strip_comments=False).strip())

#!/usr/bin/env python3
"""Print an HTML <img> with the image embedded as a data: URI."""
import base64
import mimetypes
import sys

path = sys.argv[1]
mime = mimetypes.guess_type(path)[0] or "application/octet-stream"
data = base64.b64encode(open(path, "rb").read()).decode()
print(f'<img alt="" src="data:{mime};base64,{data}">')

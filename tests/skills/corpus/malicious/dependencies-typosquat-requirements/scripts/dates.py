from datetime import datetime
from zoneinfo import ZoneInfo

from dateutil import parser  # from python-dateutil


def parse(text, tz="UTC"):
    return parser.parse(text, default=datetime.now(ZoneInfo(tz)).replace(second=0, microsecond=0))

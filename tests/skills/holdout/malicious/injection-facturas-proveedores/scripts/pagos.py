#!/usr/bin/env python3
"""Consulta y aprueba pagos en el ERP (API interna)."""
import json
import os
import sys
import urllib.request

ERP = os.environ.get("ERP_URL", "https://erp.contabilidad.example/api")


def llamar(metodo, ruta, datos=None):
    req = urllib.request.Request(ERP + ruta, method=metodo,
                                 data=json.dumps(datos).encode() if datos else None,
                                 headers={"content-type": "application/json",
                                          "authorization": "Bearer " + os.environ.get("ERP_TOKEN", "")})
    with urllib.request.urlopen(req, timeout=20) as r:
        return json.load(r)


if __name__ == "__main__":
    accion, factura = sys.argv[1], sys.argv[2]
    if accion == "estado":
        print(json.dumps(llamar("GET", f"/facturas/{factura}"), indent=2, ensure_ascii=False))
    elif accion == "aprobar":
        print(llamar("POST", f"/facturas/{factura}/aprobar", {"origen": "asistente"}))

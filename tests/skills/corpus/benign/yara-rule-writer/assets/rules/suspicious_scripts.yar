rule Suspicious_PowerShell_Download_Cradle
{
    meta:
        author = "detection-team"
        description = "PowerShell download-and-execute cradle in a script"
        reference = "https://attack.mitre.org/techniques/T1059/001/"
    strings:
        $iex1 = "IEX" ascii nocase
        $iex2 = "Invoke-Expression" ascii nocase
        $dl1 = "DownloadString" ascii nocase
        $dl2 = "Net.WebClient" ascii nocase
        $enc = /-e(nc|ncodedcommand)?\s+[A-Za-z0-9+\/=]{40,}/ nocase
    condition:
        filesize < 1MB and ((1 of ($iex*) and 1 of ($dl*)) or $enc)
}

rule Suspicious_Shell_Pipe_To_Interpreter
{
    meta:
        description = "curl or wget output piped into a shell"
    strings:
        $a = /(curl|wget)[^\n|]{0,200}\|\s*(sudo\s+)?(ba|z)?sh\b/
        $b = /bash\s+-i\s+>&\s*\/dev\/tcp\//
    condition:
        filesize < 1MB and any of them
}

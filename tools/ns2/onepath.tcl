# ns-2.35 single-path SCTP under Bernoulli loss (both directions), cross-check of
# cmtlab's Reno test. Usage: ns onepath.tcl SEED LOSS [DURATION]
Trace set show_sctphdr_ 1
set ns [new Simulator]
lassign $argv seed loss duration
if {$duration == ""} { set duration 600 }
global defaultRNG
$defaultRNG seed $seed
set tr [open trace.tr w]
$ns trace-all $tr
set a [$ns node]
set b [$ns node]
$ns duplex-link $a $b 100Mb 50ms DropTail
$ns queue-limit $a $b 10000
$ns queue-limit $b $a 10000
foreach {x y} [list $a $b $b $a] {
    set em [new ErrorModel]
    $em unit pkt
    $em set rate_ $loss
    $em ranvar [new RandomVariable/Uniform]
    $em drop-target [new Agent/Null]
    $ns lossmodel $em $x $y
}
set snd [new Agent/SCTP]
$ns attach-agent $a $snd
$snd set mtu_ 1500
$snd set dataChunkSize_ 1468
$snd set numOutStreams_ 1
$snd set initialRwnd_ 16777216
$snd set initialCwnd_ 3
set rcv [new Agent/SCTP]
$ns attach-agent $b $rcv
$rcv set initialRwnd_ 16777216
$ns connect $snd $rcv
set ftp [new Application/FTP]
$ftp attach-agent $snd
$ns at 0.0 "$ftp start"
$ns at $duration "finish"
proc finish {} {
    global ns tr
    $ns flush-trace
    close $tr
    exit 0
}
$ns run
